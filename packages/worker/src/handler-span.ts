import type * as Otel from '@opentelemetry/api';
import type { LeasedTask } from '@weft/client/tasks';

/** The instrumentation scope of the worker's spans. */
const TRACER_NAME = '@weft/worker';

// version "00" - trace id - parent span id - flags, as the W3C Trace Context specification writes them.
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * Where the OpenTelemetry API (major version 1) keeps what a process registered: its tracer provider
 * under `trace`, its context manager under `context`. The API shares this global across its copies.
 */
const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1');

/** Whether anything registered a tracer provider or a context manager: without, a span would be a no-op. */
function otelRegistered(): boolean {
  const registry = (globalThis as { [key: symbol]: { trace?: unknown; context?: unknown } | undefined })[
    OTEL_GLOBAL
  ];
  return registry?.trace !== undefined || registry?.context !== undefined;
}

/** The OpenTelemetry API, loaded the first time a handler runs with something registered. */
let otelApi: Promise<typeof Otel> | null = null;

/** The span context a task's `traceparent` names, or null (absent, malformed or all-zero ids). */
function parentOf(traceparent: string | undefined): Otel.SpanContext | null {
  const m = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return null;
  return { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16) & 0xff, isRemote: true };
}

/**
 * Runs a handler inside a span, `weft.handle <task type>` (kind consumer), a child of the `traceparent` the
 * server sent with the task, and active while the handler runs, so spans the handler makes are its children.
 * A handler that throws ends it in error. With no OpenTelemetry SDK registered in the process the handler
 * runs as it is and the OpenTelemetry API is not even loaded (a worker process stays small and a task
 * costs no no-op span).
 */
export async function traceHandler<T>(
  task: LeasedTask,
  worker: string,
  run: () => T | Promise<T>,
): Promise<T> {
  if (!otelRegistered()) return run();
  otelApi ??= import('@opentelemetry/api');
  const { context, SpanKind, SpanStatusCode, trace } = await otelApi;
  const parent = parentOf(task.traceparent);
  const base = parent ? trace.setSpanContext(context.active(), parent) : context.active();
  const span = trace.getTracer(TRACER_NAME).startSpan(
    `weft.handle ${task.task_type}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'weft.run.id': task.run_id,
        'weft.definition': task.definition,
        'weft.node.id': task.node_id,
        'weft.node.iteration': task.iteration,
        'weft.task.id': task.task_id,
        'weft.task.type': task.task_type,
        'weft.task.attempt': task.attempt,
        'weft.worker.name': worker,
      },
    },
    base,
  );
  try {
    return await context.with(trace.setSpan(base, span), run);
  } catch (e) {
    span.recordException(e instanceof Error ? e : String(e));
    span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
    throw e;
  } finally {
    span.end();
  }
}
