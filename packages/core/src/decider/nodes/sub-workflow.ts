import type { SubWorkflowNode } from '../../definition/node-types.js';
import type { Json } from '../../json.js';
import { childRunId } from '../../stable-id.js';
import type { DecisionContext } from '../context.js';
import type { TaskError } from '../state.js';
import { putTask } from '../task-rows.js';
import { emitStart } from './child-start.js';
import type { NodeHandler } from './node-handler.js';
import { startingInput } from './node-input.js';

/** The task type shown for sub-workflow attempts (never queued: no worker runs them). */
export const SUB_WORKFLOW_TASK_TYPE = 'weft.sub_workflow';

/**
 * A sub_workflow node starts a child run and waits for it. Its attempt is `running` (no worker has it)
 * while the child runs; the start leaves through the outbox with the decision. The child's end comes back
 * as `child_finished`, in the child's own transaction, so it exists only if the child's end committed.
 * Each retry starts a new child.
 */
export const subWorkflowNode: NodeHandler<SubWorkflowNode> = {
  async activate(ctx, node, reach) {
    const { iteration, waiting, arrivals } = reach;
    const input = await startingInput(ctx, node.id, reach);
    if (!input) return;
    putTask(ctx, node.id, iteration, waiting, {
      status: 'running',
      input: input.value,
      arrivals,
      dispatch: { taskType: SUB_WORKFLOW_TASK_TYPE, priority: 0, timeoutMs: node.timeoutMs },
    });
    startChild(ctx, node, iteration, input.attempt, input.value);
  },

  retry(ctx, node, failed) {
    const attempt = failed.attempt + 1;
    const { iteration, input } = failed;
    ctx.emit({
      kind: 'create_task',
      nodeId: node.id,
      iteration,
      attempt,
      status: 'running',
      input,
      output: null,
      error: null,
      arrivals: [],
      dispatch: { taskType: SUB_WORKFLOW_TASK_TYPE, priority: 0, timeoutMs: node.timeoutMs },
    });
    startChild(ctx, node, iteration, attempt, input ?? ctx.run.input);
  },

  /**
   * The child lands only on the attempt that started it, and only while that attempt still runs: a child
   * of an attempt that timed out and was retried is stale, like a late worker report. A completed child
   * completes the attempt and the run moves on. Otherwise the attempt fails and the returned `node_failed`
   * is decided next, so the node's retry policy applies (a cancelled or terminated child is not retried).
   */
  async childFinished(ctx, _node, event) {
    const task = ctx.task(event.nodeId, event.iteration);
    if (!task || task.attempt !== event.attempt || task.status !== 'running') return null;
    const at = { nodeId: event.nodeId, iteration: event.iteration, attempt: event.attempt };
    const identity = { kind: 'update_task', ...at, expect: 'running' } as const;
    if (event.status === 'completed') {
      ctx.emit({ ...identity, status: 'completed', output: event.output, error: null });
      ctx.record('task.completed', { output: event.output, child_run_id: event.childRunId }, at);
      if (ctx.run.status === 'running') await ctx.flow.propagate(event.nodeId, event.iteration, true);
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
  },
};

function startChild(
  ctx: DecisionContext,
  node: SubWorkflowNode,
  iteration: string,
  attempt: number,
  input: Json,
): void {
  const runId = childRunId(ctx.now, ctx.run.id, node.id, iteration, attempt);
  emitStart(ctx, node, { iteration, attempt }, input, runId, false);
}
