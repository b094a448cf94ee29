import type { StartWorkflowNode } from '../../definition/node-types.js';
import { childRunId } from '../../stable-id.js';
import { putTask } from '../task-rows.js';
import { emitStart } from './child-start.js';
import type { NodeHandler } from './node-handler.js';
import { nodeInput } from './node-input.js';
import { failAtStart } from './outcome.js';

/**
 * A start_workflow node starts a run and moves on at once (fire and forget): it completes with the new
 * run's id as `{ run_id }`, and the start leaves through the outbox with the decision.
 */
export const startWorkflowNode: NodeHandler<StartWorkflowNode> = {
  async activate(ctx, node, reach) {
    const { iteration, waiting, arrivals } = reach;
    const attempt = waiting?.attempt ?? 1;
    const input = await nodeInput(ctx, node.id, iteration);
    if (!input.ok) {
      failAtStart(ctx, node.id, reach, input.message, attempt);
      return;
    }
    const runId = childRunId(ctx.now, ctx.run.id, node.id, iteration, attempt);
    putTask(ctx, node.id, iteration, waiting, {
      status: 'completed',
      input: input.value,
      output: { run_id: runId },
      arrivals,
    });
    emitStart(ctx, node, { iteration, attempt }, input.value, runId, true);
    await ctx.flow.propagate(node.id, iteration, true);
  },
};
