import type { NoopNode } from '../../definition/node-types.js';
import { putTask } from '../task-rows.js';
import type { NodeHandler } from './node-handler.js';

/** A noop completes as soon as it is reached: an explicit join point, or a placeholder. */
export const noopNode: NodeHandler<NoopNode> = {
  async activate(ctx, node, { iteration, waiting, arrivals }) {
    putTask(ctx, node.id, iteration, waiting, { status: 'completed', input: null, output: null, arrivals });
    await ctx.flow.propagate(node.id, iteration, true);
  },
};
