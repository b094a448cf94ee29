import type { LoopNode } from '../definition/node-types.js';
import { asCondition, gatherOutputs, startIteration } from './body.js';
import type { DecisionContext } from './context.js';
import { propagate, putTask } from './flow.js';
import { childIteration } from './iterations.js';
import { completeRunning, failRunning } from './outcome.js';
import { evaluateAt } from './scope.js';
import type { Arrival, TaskState } from './state.js';

/**
 * A loop runs its body once, then again while its `while` condition holds over the pass just finished,
 * at most `max_iterations` times; a condition still true after the last allowed pass fails the node. Its
 * output is the list of every pass's output, in order.
 */
export async function activateLoop(
  ctx: DecisionContext,
  node: LoopNode,
  iteration: string,
  waiting: TaskState | null,
  arrivals: readonly Arrival[],
): Promise<void> {
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
}

/** Pass `index` of the loop instance at `parent` is done: repeat, finish or fail. */
export async function loopPassDone(
  ctx: DecisionContext,
  node: LoopNode,
  parent: string,
  index: number,
): Promise<void> {
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
      failRunning(
        ctx,
        own,
        `its while condition still held after ${node.maxIterations} passes (max_iterations: ${node.maxIterations})`,
        'error',
      );
      return;
    }
    await startIteration(ctx, node, parent, index + 1, null, { index: index + 1 });
    return;
  }
  completeRunning(ctx, own, gatherOutputs(ctx, node.id, parent, index + 1));
  await propagate(ctx, node.id, parent, true);
}
