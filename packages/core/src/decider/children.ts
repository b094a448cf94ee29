import type { Json } from '../json.js';
import type { DecisionContext } from './context.js';
import type { RunEvent } from './events.js';
import { propagate } from './flow.js';
import type { TaskError } from './state.js';

type ChildFinished = Extract<RunEvent, { kind: 'child_finished' }>;

/**
 * A child run ended. The event reaches the parent's inbox in the child's own transaction, so it exists only
 * if the child's end committed (invariant 7: the child's outcome comes back). It lands only on the attempt
 * that started the child and only while that attempt is still running: a child of an attempt that timed out
 * and was retried is stale, like a late worker report.
 *
 * A completed child completes the attempt and the run moves on. Otherwise the attempt fails and the
 * returned `node_failed` event is decided next, so the node's retry policy applies as for any failure
 * (a retry starts a new child). A cancelled or terminated child is not retried.
 */
export async function childFinished(ctx: DecisionContext, event: ChildFinished): Promise<RunEvent | null> {
  const task = ctx.task(event.nodeId, event.iteration);
  if (!task || task.attempt !== event.attempt || task.status !== 'running') return null;
  const at = { nodeId: event.nodeId, iteration: event.iteration, attempt: event.attempt };
  const identity = { kind: 'update_task', ...at, expect: 'running' } as const;
  if (event.status === 'completed') {
    ctx.emit({ ...identity, status: 'completed', output: event.output, error: null });
    ctx.record('task.completed', { output: event.output, child_run_id: event.childRunId }, at);
    if (ctx.run.status === 'running') await propagate(ctx, event.nodeId, event.iteration, true);
    return null;
  }
  const why = event.error?.message ?? event.status;
  const error: TaskError = {
    message: `child run ${event.childRunId} ${event.status}: ${why}`,
    reason: event.status === 'failed' ? 'error' : 'cancelled',
    retryable: event.status === 'failed',
    details: { child_run_id: event.childRunId } as Json,
  };
  ctx.emit({ ...identity, status: 'failed', error });
  return { kind: 'node_failed', ...at, error };
}
