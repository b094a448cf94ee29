import type { ContainerNode } from '../../definition/node-types.js';
import type { Json } from '../../json.js';
import type { DecisionContext } from '../context.js';
import { childIteration, iterationIndex, parentIteration } from '../iterations.js';
import { evaluateAt, loadAll } from '../scope.js';
import type { TaskState } from '../state.js';
import { failRunning } from './outcome.js';

/**
 * Passes of loops and items of maps. Each pass (or item) has a row of its own: the container's node id at
 * the pass's iteration key (`poll` at `2`), holding the item as input and the pass's output once done.
 * It works like a join of the body's last nodes: each one that finishes (or is skipped) arrives there, and
 * when all have, the pass is done and the container decides what follows (its handler's `bodyDone`). So
 * finishing a pass reads the pass, never the other passes: the cost of a step does not grow with the
 * number of passes or items.
 */

/**
 * Starts pass (or item) `index` of a container whose own instance is at `parent`: its row becomes
 * `running` (a map's item row already exists, `waiting`), and the body's entry nodes start.
 */
export async function startIteration(
  ctx: DecisionContext,
  container: ContainerNode,
  parent: string,
  index: number,
  row: TaskState | null,
  input: Json,
): Promise<void> {
  const iteration = childIteration(parent, index);
  if (row) {
    ctx.emit({
      kind: 'update_task',
      nodeId: container.id,
      iteration,
      attempt: row.attempt,
      expect: 'waiting',
      status: 'running',
    });
  } else {
    ctx.emit({
      kind: 'create_task',
      nodeId: container.id,
      iteration,
      attempt: 1,
      status: 'running',
      input,
      output: null,
      error: null,
      arrivals: [],
      dispatch: null,
    });
  }
  // The pass is new: none of its body's node instances exist, and none need reading from the store.
  ctx.assumeAbsent(container.body.nodes.map((n) => ({ nodeId: n.id, iteration })));
  for (const entry of ctx.workflow.graph.bodies.get(container.id)?.entries ?? []) {
    if (ctx.run.status !== 'running') return;
    await ctx.flow.activate(entry, iteration, null, []);
  }
}

/**
 * A last node of a body finished (or was skipped) in the pass at `iteration`. When that was the pass's
 * last one, completes the pass and returns the container instance's key and the pass's index, for the
 * container to decide what follows; otherwise null.
 */
export async function bodySinkDone(
  ctx: DecisionContext,
  container: ContainerNode,
  sinkId: string,
  iteration: string,
  taken: boolean,
): Promise<{ parent: string; index: number } | null> {
  const containerId = container.id;
  const pass = ctx.task(containerId, iteration);
  if (pass?.status !== 'running' || pass.arrivals.some((a) => a.from === sinkId)) return null;
  const arrivals = [...pass.arrivals, { from: sinkId, taken }];
  const sinks = ctx.workflow.graph.bodies.get(containerId)?.sinks ?? [];
  const at = { nodeId: containerId, iteration, attempt: pass.attempt };
  if (arrivals.length < sinks.length) {
    ctx.emit({ kind: 'update_task', ...at, expect: 'running', status: 'running', arrivals });
    return null;
  }
  const parent = parentIteration(iteration);
  const index = iterationIndex(iteration);
  const output = await iterationOutput(ctx, container, iteration);
  if (!output.ok) {
    ctx.emit({ kind: 'update_task', ...at, expect: 'running', status: 'running', arrivals });
    const own = ctx.task(containerId, parent);
    const unit = container.kind === 'loop' ? 'pass' : 'item';
    if (own) failRunning(ctx, own, `${unit} ${index}: ${output.message}`, 'input');
    return null;
  }
  ctx.emit({
    kind: 'update_task',
    ...at,
    expect: 'running',
    status: 'completed',
    arrivals,
    output: output.value,
  });
  return { parent, index };
}

/**
 * The output of one pass (or item): the body's output mapping; without one, the output of a map's task
 * (for `task:` maps), else the outputs of the body's last nodes, by node id.
 */
async function iterationOutput(
  ctx: DecisionContext,
  container: ContainerNode,
  iteration: string,
): Promise<{ ok: true; value: Json } | { ok: false; message: string }> {
  const mapping = ctx.workflow.mapping(container.id, 'body.output');
  if (mapping) {
    return evaluateAt(ctx, mapping, { container: container.id, iteration });
  }
  const sinks = ctx.workflow.graph.bodies.get(container.id)?.sinks ?? [];
  const tasks = loadAll(
    ctx,
    sinks.map((nodeId) => ({ nodeId, iteration })),
  );
  const only = container.body.nodes.length === 1 ? container.body.nodes[0]! : null;
  if (only && only.id === `${container.id}.task`) return { ok: true, value: tasks[0]?.output ?? null };
  const out: { [key: string]: Json } = {};
  sinks.forEach((sink, i) => {
    const task = tasks[i];
    if (task?.status === 'completed') out[sink] = task.output;
  });
  return { ok: true, value: out };
}

/** The outputs of passes (or items) 0 to `count - 1`, in order: what a finished loop or map outputs. */
export function gatherOutputs(
  ctx: DecisionContext,
  containerId: string,
  parent: string,
  count: number,
): Json[] {
  const rows = loadAll(
    ctx,
    Array.from({ length: count }, (_, i) => ({ nodeId: containerId, iteration: childIteration(parent, i) })),
  );
  return rows.map((row) => row?.output ?? null);
}
