import { context, type Link, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import type { LockedRun } from '../store/records.js';
import { contextOfTraceparent, parseTraceparent } from './traceparent.js';
import { runAttributes, tracingRegistered, WeftAttr, weftTracer } from './weft-tracer.js';

/** At most this many runs of one transaction are linked from its span. */
const MAX_LINKS = 32;

/** What a decision transaction's span is told: who decided, and its span if the caller opened it already. */
export interface DecisionTrace {
  /** `start`, `report`, `signal`, `operator`, `human_task`, `decider`, `sweeper`, `relay`. */
  readonly source: string;
  /** A span the caller opened before the transaction (a start keeps its context with the runs it inserts). */
  readonly span?: Span;
}

/**
 * Opens the span of a start's transaction, `weft.decide start`, as a child of the caller's `traceparent`
 * (or of the active context), linked to the callers of other starts the batch took in: its context is kept
 * with the runs the start inserts, so their tasks' spans are its children.
 */
export function openStartSpan(traceparent: string | undefined, others: readonly string[] = []): Span {
  const links: Link[] = [];
  for (const other of others) {
    const linked = parseTraceparent(other);
    if (linked && links.length < MAX_LINKS) links.push({ context: linked });
  }
  return weftTracer().startSpan(
    'weft.decide start',
    { links, attributes: { [WeftAttr.decisionSource]: 'start' } },
    contextOfTraceparent(traceparent),
  );
}

/**
 * Records the span of a decision transaction once it is over, `weft.decide <source>`, from `startedAt`: a
 * child of the active span (the HTTP request that decided) or, when nothing is active (a background loop)
 * and one run was decided, of that run's trace context; linked to the trace context of every other run
 * decided. A transaction that decided no run (a background loop's empty round) records nothing, and
 * without an SDK nothing is made at all.
 */
export function recordDecision(
  decision: DecisionTrace,
  startedAt: number,
  runs: ReadonlyMap<string, LockedRun>,
  error: unknown,
): void {
  if (decision.span) {
    // A start's span: its runs keep its own context, so there is nothing to link.
    if (decision.span.isRecording()) describe(decision.span, runs, error);
    decision.span.end();
    return;
  }
  if (runs.size === 0 || !tracingRegistered()) return;
  const active = context.active();
  const activeSpan = trace.getSpanContext(active);
  const only = runs.size === 1 ? runs.values().next().value! : null;
  // A background loop's decision of one run is part of that run's trace; a request's is part of the request's.
  const underRun = only !== null && (activeSpan === undefined || !trace.isSpanContextValid(activeSpan));
  const links: Link[] = [];
  if (!underRun)
    for (const run of runs.values()) {
      const linked = parseTraceparent(run.traceContext);
      if (linked && links.length < MAX_LINKS) links.push({ context: linked });
    }
  const span = weftTracer().startSpan(
    `weft.decide ${decision.source}`,
    { startTime: startedAt, links, attributes: { [WeftAttr.decisionSource]: decision.source } },
    underRun ? contextOfTraceparent(only.traceContext) : active,
  );
  if (span.isRecording()) describe(span, runs, error);
  span.end();
}

/** Sets a decision span's attributes and, for a transaction that threw, its error. */
function describe(span: Span, runs: ReadonlyMap<string, LockedRun>, error: unknown): void {
  if (runs.size === 1) {
    const run = runs.values().next().value!;
    span.setAttributes({ ...runAttributes(run), [WeftAttr.definitionVersion]: run.definitionVersion });
  }
  span.setAttribute(WeftAttr.runCount, runs.size);
  if (error !== null) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
  }
}
