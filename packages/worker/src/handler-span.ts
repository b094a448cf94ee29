import { context, type SpanContext, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { LeasedTask } from '@weft/client';

/** The instrumentation scope of the worker's spans. */
const TRACER_NAME = '@weft/worker';

// version "00" - trace id - parent span id - flags, as the W3C Trace Context specification writes them.
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span context a task's `traceparent` names, or null (absent, malformed or all-zero ids). */
function parentOf(traceparent: string | undefined): SpanContext | null {
  const m = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return null;
  return { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16) & 0xff, isRemote: true };
}

/**
 * Runs a handler inside a span, `weft.handle <task type>` (kind consumer), a child of the `traceparent` the
 * server sent with the task, and active while the handler runs, so spans the handler makes are its children.
 * A handler that throws ends it in error. With no OpenTelemetry SDK registered in the process it costs a
 * no-op span.
 */
export async function traceHandler<T>(
  task: LeasedTask,
  worker: string,
  run: () => T | Promise<T>,
): Promise<T> {
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
