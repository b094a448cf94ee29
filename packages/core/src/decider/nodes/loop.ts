import type { LoopNode } from '../../definition/node-types.js';
import type { Json } from '../../json.js';
import { childIteration } from '../iterations.js';
import { evaluateAt } from '../scope.js';
import { putTask } from '../task-rows.js';
import type { NodeHandler } from './node-handler.js';
import { completeRunning, describeValue, failRunning } from './outcome.js';
import { gatherOutputs, startIteration } from './passes.js';

/**
 * A loop runs its body once, then again while its `while` condition holds over the pass just finished,
 * at most `max_iterations` times; a condition still true after the last allowed pass fails the node. Its
 * output is the list of every pass's output, in order.
 */
export const loopNode: NodeHandler<LoopNode> = {
  async activate(ctx, node, { iteration, waiting, arrivals }) {
    putTask(ctx, node.id, iteration, waiting, {
      status: 'running',
      input: { max_iterations: node.maxIterations },
      arrivals,
    });
    ctx.record(
      'loop.started',
      { max_iterations: node.maxIterations },
      { nodeId: node.id, iteration, attempt: 1 },
    );
    await startIteration(ctx, node, iteration, 0, null, { index: 0 });
  },

  /** Pass `index` of the loop instance at `parent` is done: repeat, finish or fail. */
  async bodyDone(ctx, node, parent, index) {
    const own = ctx.task(node.id, parent);
    if (own?.status !== 'running') return;
    const pass = childIteration(parent, index);
    const mapping = ctx.workflow.mapping(node.id, 'while');
    if (!mapping) throw new Error(`loop "${node.id}" has no compiled while condition`);
    const evaluated = await evaluateAt(ctx, mapping, { container: node.id, iteration: pass });
    const condition = evaluated.ok ? asCondition(evaluated.value) : evaluated;
    if (!condition.ok) {
      failRunning(ctx, own, `after pass ${index}: ${condition.message}`, 'input');
      return;
    }
    if (condition.value) {
      if (index + 1 >= node.maxIterations) {
        const limit = `max_iterations: ${node.maxIterations}`;
        const message = `its while condition still held after ${node.maxIterations} passes (${limit})`;
        failRunning(ctx, own, message, 'error');
        return;
      }
      await startIteration(ctx, node, parent, index + 1, null, { index: index + 1 });
      return;
    }
    completeRunning(ctx, own, gatherOutputs(ctx, node.id, parent, index + 1));
    await ctx.flow.propagate(node.id, parent, true);
  },
};

/** Checks that a `while` gave a boolean. */
function asCondition(value: Json): { ok: true; value: boolean } | { ok: false; message: string } {
  if (typeof value === 'boolean') return { ok: true, value };
  return { ok: false, message: `while must give true or false, not ${describeValue(value)}` };
}
