import type { StartWorkflowNode } from '../../definition/node-types.js';
import { childRunId } from '../../stable-id.js';
import { putTask } from '../task-rows.js';
import { emitStart } from './child-start.js';
import type { NodeHandler } from './node-handler.js';
import { startingInput } from './node-input.js';

/**
 * A start_workflow node starts a run and moves on at once (fire and forget): it completes with the new
 * run's id as `{ run_id }`, and the start leaves through the outbox with the decision.
 */
export const startWorkflowNode: NodeHandler<StartWorkflowNode> = {
  async activate(ctx, node, reach) {
    const { iteration, waiting, arrivals } = reach;
    const input = await startingInput(ctx, node.id, reach);
    if (!input) return;
    const { attempt } = input;
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
