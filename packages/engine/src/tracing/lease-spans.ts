import { SpanKind } from '@opentelemetry/api';
import type { LeasedTask } from '../store/records.js';
import { contextOfTraceparent, formatTraceparent } from './traceparent.js';
import { tracingRegistered, WeftAttr, weftTracer } from './weft-tracer.js';

/**
 * A span per leased task, `weft.task <task type>` (kind producer), a child of its run's trace context; each
 * task then carries that span's `traceparent`, under which
 * the worker opens its handler's span. The span marks the hand-over (it lasts no longer than handing the
 * tasks out): the work itself is the worker's span under it. A task whose run has no trace context is left as it is; so is every
 * task when tracing is off (the no-op span carries the run's context along unchanged).
 */
export function traceLeases(tasks: readonly LeasedTask[]): LeasedTask[] {
  // Without an SDK the span would be a no-op carrying the run's context, which the task carries already.
  if (!tracingRegistered()) return tasks as LeasedTask[];
  const tracer = weftTracer();
  return tasks.map((task) => {
    if (!task.traceContext) return task;
    const span = tracer.startSpan(
      `weft.task ${task.taskType}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          [WeftAttr.runId]: task.runId,
          [WeftAttr.definition]: task.definitionName,
          [WeftAttr.nodeId]: task.nodeId,
          [WeftAttr.iteration]: task.iteration,
          [WeftAttr.taskId]: task.id,
          [WeftAttr.taskType]: task.taskType,
          [WeftAttr.attempt]: task.attempt,
        },
      },
      contextOfTraceparent(task.traceContext),
    );
    if (!span.isRecording()) return task;
    span.end();
    return { ...task, traceContext: formatTraceparent(span.spanContext()) ?? task.traceContext };
  });
}
