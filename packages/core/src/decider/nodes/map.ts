import type { MapNode } from '../../definition/node-types.js';
import type { Json } from '../../json.js';
import type { DecisionContext } from '../context.js';
import { childIteration } from '../iterations.js';
import { evaluateAt, positionOf } from '../scope.js';
import type { TaskState } from '../state.js';
import { putTask } from '../task-rows.js';
import type { NodeHandler, Reach } from './node-handler.js';
import { completeRunning, describeValue, failAtStart } from './outcome.js';
import { gatherOutputs, startIteration } from './passes.js';

/** Most items one map may have. */
export const MAX_MAP_ITEMS = 10_000;

/** A map's progress, kept as its row's output while it runs. */
interface Progress {
  readonly total: number;
  readonly started: number;
  readonly done: number;
}

/**
 * A map runs its body once per item of a list computed when it is reached, at most `concurrency` items
 * at a time, and outputs the items' outputs in item order. Each item gets a row (the map's id at the
 * item's iteration key) holding the item; the map's own row counts items started and done. Finishing an
 * item reads that item, the map's row and the next item: never the other items. Only the last item reads
 * them all, once, to collect the output.
 */
export const mapNode: NodeHandler<MapNode> = {
  async activate(ctx, node, reach) {
    const items = await itemsOf(ctx, node, reach);
    if (!items) return;
    const { iteration, waiting, arrivals } = reach;
    const at = { nodeId: node.id, iteration, attempt: 1 };
    ctx.record('map.started', { items: items.length, concurrency: node.concurrency }, at);
    if (items.length === 0) {
      putTask(ctx, node.id, iteration, waiting, {
        status: 'completed',
        input: { items: 0 },
        output: [],
        arrivals,
      });
      ctx.record('node.completed', { output: [] }, at);
      await ctx.flow.propagate(node.id, iteration, true);
      return;
    }
    const progress: Progress = { total: items.length, started: 0, done: 0 };
    putTask(ctx, node.id, iteration, waiting, {
      status: 'running',
      input: { items: items.length, concurrency: node.concurrency },
      output: progress as unknown as Json,
      arrivals,
    });
    items.forEach((item, index) => {
      ctx.emit({
        kind: 'create_task',
        nodeId: node.id,
        iteration: childIteration(iteration, index),
        attempt: 1,
        status: 'waiting',
        input: item,
        output: null,
        error: null,
        arrivals: [],
        dispatch: null,
      });
    });
    await fill(ctx, node, iteration);
  },

  /** An item of the map instance at `parent` is done: start the next, or finish. */
  async bodyDone(ctx, node, parent) {
    const own = ctx.task(node.id, parent);
    if (own?.status !== 'running') return;
    const progress = progressOf(own);
    const done = progress.done + 1;
    if (done >= progress.total) {
      completeRunning(ctx, own, gatherOutputs(ctx, node.id, parent, progress.total));
      await ctx.flow.propagate(node.id, parent, true);
      return;
    }
    setProgress(ctx, own, { ...progress, done });
    await fill(ctx, node, parent);
  },
};

/** The list `items` gives, or null once a bad value failed the node. */
async function itemsOf(ctx: DecisionContext, node: MapNode, reach: Reach): Promise<Json[] | null> {
  const mapping = ctx.workflow.mapping(node.id, 'items');
  if (!mapping) throw new Error(`map "${node.id}" has no compiled items expression`);
  const evaluated = await evaluateAt(ctx, mapping, positionOf(ctx, node.id, reach.iteration));
  const wrap = ` (to map over a filter that may match one item or none, wrap it in a list: [${node.items}])`;
  if (!evaluated.ok) {
    failAtStart(ctx, node.id, reach, `${evaluated.message}${wrap}`);
    return null;
  }
  const items = evaluated.value;
  if (!Array.isArray(items)) {
    failAtStart(ctx, node.id, reach, `items must give a list, not ${describeValue(items)}${wrap}`);
    return null;
  }
  if (items.length > MAX_MAP_ITEMS) {
    const message = `items gave ${items.length} items; a map takes at most ${MAX_MAP_ITEMS}`;
    failAtStart(ctx, node.id, reach, message);
    return null;
  }
  return items;
}

/** Starts items while there are items left and room under the concurrency cap. */
async function fill(ctx: DecisionContext, node: MapNode, iteration: string): Promise<void> {
  for (;;) {
    if (ctx.run.status !== 'running') return;
    const own = ctx.task(node.id, iteration);
    if (own?.status !== 'running') return;
    const progress = progressOf(own);
    if (progress.started >= progress.total) return;
    if (node.concurrency !== null && progress.started - progress.done >= node.concurrency) return;
    const index = progress.started;
    const row = ctx.task(node.id, childIteration(iteration, index));
    // Counted before the item starts: an item that finishes at once (a body of transforms) sees it.
    setProgress(ctx, own, { ...progress, started: index + 1 });
    await startIteration(ctx, node, iteration, index, row, row?.input ?? null);
  }
}

function progressOf(task: TaskState): Progress {
  const p = task.output as Partial<Progress> | null;
  return { total: p?.total ?? 0, started: p?.started ?? 0, done: p?.done ?? 0 };
}

function setProgress(ctx: DecisionContext, task: TaskState, progress: Progress): void {
  ctx.emit({
    kind: 'update_task',
    nodeId: task.nodeId,
    iteration: task.iteration,
    attempt: task.attempt,
    expect: 'running',
    status: 'running',
    output: progress as unknown as Json,
  });
}
