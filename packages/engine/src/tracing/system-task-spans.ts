import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { LeasedTask } from '../store/records.js';
import { contextOfTraceparent } from './traceparent.js';
import { WeftAttr, weftTracer } from './weft-tracer.js';

/**
 * Runs a system task (`weft.http`, …) inside a span, `weft.handle <task type>`, a child of the task's lease
 * span, as the worker SDK does for a worker's handler; active while it runs. A failed outcome or a throw
 * ends it in error.
 */
export async function traceSystemTask<
  T extends { readonly kind: string; readonly error?: { message: string } },
>(task: LeasedTask, worker: string, run: () => Promise<T>): Promise<T> {
  const parent = contextOfTraceparent(task.traceContext);
  const span = weftTracer().startSpan(
    `weft.handle ${task.taskType}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        [WeftAttr.runId]: task.runId,
        [WeftAttr.definition]: task.definitionName,
        [WeftAttr.nodeId]: task.nodeId,
        [WeftAttr.iteration]: task.iteration,
        [WeftAttr.taskId]: task.id,
        [WeftAttr.taskType]: task.taskType,
        [WeftAttr.attempt]: task.attempt,
        'weft.worker.name': worker,
      },
    },
    parent,
  );
  try {
    const outcome = await context.with(trace.setSpan(parent, span), run);
    if (outcome.kind === 'failed')
      span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error?.message ?? 'the task failed' });
    return outcome;
  } catch (e) {
    span.recordException(e instanceof Error ? e : String(e));
    span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
    throw e;
  } finally {
    span.end();
  }
}
