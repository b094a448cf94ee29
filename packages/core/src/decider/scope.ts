import type { ExpressionScope } from '../expr/expression.js';
import type { CompiledMapping } from '../expr/mapping.js';
import type { Json } from '../json.js';
import type { DecisionContext } from './context.js';
import {
  childIteration,
  iterationIndex,
  iterationPrefix,
  parentIteration,
  refIteration,
} from './iterations.js';
import { MissingState, type TaskState } from './state.js';

/**
 * Where an expression is evaluated: inside the body of `container` (null at the top level) at
 * `iteration`. A node's own fields are evaluated at the node's position; a loop's `while` and a body's
 * `output` at the position of the pass or item they look at.
 */
export interface Position {
  readonly container: string | null;
  readonly iteration: string;
}

/** The position of a node instance. */
export function positionOf(ctx: DecisionContext, nodeId: string, iteration: string): Position {
  return { container: ctx.workflow.graph.parent.get(nodeId) ?? null, iteration };
}

const usesItem = new WeakMap<CompiledMapping, { item: boolean; previous: boolean }>();

function uses(mapping: CompiledMapping): { item: boolean; previous: boolean } {
  let found = usesItem.get(mapping);
  if (!found) {
    const text = JSON.stringify(mapping.source);
    found = { item: /\bitem\b/.test(text), previous: /\bprevious\b/.test(text) };
    usesItem.set(mapping, found);
  }
  return found;
}

/**
 * The expression scope at a position: the run input, variables and identity, the outputs of the nodes the
 * mapping reads (each at its own iteration: the same pass or item for nodes of the same body, the
 * enclosing instance for nodes around it), and inside bodies `index` (the pass or item index), `item`
 * (the innermost map's item) and `previous` (the innermost loop's previous pass output, null on the first).
 */
export function scopeAt(ctx: DecisionContext, mapping: CompiledMapping, at: Position): ExpressionScope {
  const graph = ctx.workflow.graph;
  const nodes: Record<string, Json> = {};
  const keys = mapping.refs.map((ref) => ({
    nodeId: ref,
    iteration: refIteration(graph, ref, at.iteration),
  }));
  loadAll(ctx, keys).forEach((task, i) => {
    // An operator's skip may give the node an output; a skipped branch has none.
    const skippedWithOutput = task?.status === 'skipped' && task.output !== null;
    if (task?.status === 'completed' || skippedWithOutput)
      nodes[keys[i]!.nodeId] = { output: task!.output, attempt: task!.attempt };
  });
  const extra: Record<string, Json> = {};
  if (at.container !== null) {
    extra.index = iterationIndex(at.iteration);
    const needs = uses(mapping);
    const map = innermost(ctx, at.container, 'map');
    if (map !== null && needs.item) extra.item = itemOf(ctx, map, at.iteration);
    const loop = innermost(ctx, at.container, 'loop');
    if (loop !== null && needs.previous) extra.previous = previousOf(ctx, loop, at.iteration);
  }
  return {
    input: ctx.run.input,
    nodes,
    vars: ctx.run.vars,
    run: { id: ctx.run.id, definition: ctx.run.definition, version: ctx.run.version },
    ...extra,
  };
}

/** The innermost container of a kind around a body (the container itself included), or null. */
export function innermost(
  ctx: DecisionContext,
  container: string | null,
  kind: 'loop' | 'map',
): string | null {
  for (let at = container; at !== null; at = ctx.workflow.graph.parent.get(at) ?? null) {
    if (ctx.workflow.node(at).kind === kind) return at;
  }
  return null;
}

/** The item of map `map` that `iteration` is inside: the input of the item's row. */
export function itemOf(ctx: DecisionContext, map: string, iteration: string): Json {
  const itemIteration = iterationPrefix(iteration, (ctx.workflow.graph.depth.get(map) ?? 0) + 1);
  return ctx.task(map, itemIteration)?.input ?? null;
}

function previousOf(ctx: DecisionContext, loop: string, iteration: string): Json {
  const pass = iterationPrefix(iteration, (ctx.workflow.graph.depth.get(loop) ?? 0) + 1);
  const index = iterationIndex(pass);
  if (index <= 0) return null;
  return ctx.task(loop, childIteration(parentIteration(pass), index - 1))?.output ?? null;
}

/**
 * Evaluates a mapping at a position. A failure names the path and, for references to nodes that have not
 * run (or have no output), says so.
 */
export async function evaluateAt(
  ctx: DecisionContext,
  mapping: CompiledMapping,
  at: Position,
): Promise<{ ok: true; value: Json } | { ok: false; message: string }> {
  const result = await mapping.evaluate(scopeAt(ctx, mapping, at), ctx.now);
  if (result.ok) return result;
  return {
    ok: false,
    message: `${result.error.path}: ${result.error.message}${explainRefs(ctx, mapping, at.iteration)}`,
  };
}

/** Says which of the nodes a mapping reads have not run or have no output. */
export function explainRefs(ctx: DecisionContext, mapping: CompiledMapping, iteration: string): string {
  const notes: string[] = [];
  for (const ref of mapping.refs) {
    const task = ctx.task(ref, refIteration(ctx.workflow.graph, ref, iteration));
    if (!task) notes.push(`node "${ref}" has not run`);
    else if (task.status !== 'completed') notes.push(`node "${ref}" is ${task.status}, so it has no output`);
  }
  return notes.length ? ` (${notes.join('; ')})` : '';
}

/**
 * Reads many node instances at once: when some were not loaded, asks for all of them in one MissingState,
 * so the shell loads them in one query instead of one round per instance.
 */
export function loadAll(
  ctx: DecisionContext,
  keys: readonly { nodeId: string; iteration: string }[],
): (TaskState | null)[] {
  const missing: { nodeId: string; iteration: string }[] = [];
  const out: (TaskState | null)[] = [];
  for (const key of keys) {
    const task = ctx.taskIfLoaded(key.nodeId, key.iteration);
    if (task === undefined) missing.push({ nodeId: key.nodeId, iteration: key.iteration });
    else out.push(task);
  }
  if (missing.length > 0) throw new MissingState(missing);
  return out;
}
