import type { Graph } from '../definition/graph.js';

/**
 * Iteration keys: where a node instance sits among loops and maps. Top-level nodes have the empty key.
 * A node in the body of a loop or map has its container's key plus the pass (or item) index, joined by
 * `/`: the third pass of loop `poll` at the top level is `2`; item 17 of a map inside that pass is `2/17`.
 * The key is part of the task identity (run, node, iteration, attempt), so every pass and every item is
 * its own instance, and the container's own row (`poll`, ``) never collides with its passes' rows.
 */

/** The key of pass (or item) `index` of a container whose own key is `parent`. */
export function childIteration(parent: string, index: number): string {
  return parent === '' ? String(index) : `${parent}/${index}`;
}

/** How many loops and maps a key is nested in. */
export function iterationDepth(iteration: string): number {
  return iteration === '' ? 0 : iteration.split('/').length;
}

/** The first `depth` levels of a key: the key of the enclosing instance at that depth. */
export function iterationPrefix(iteration: string, depth: number): string {
  if (depth <= 0) return '';
  return iteration.split('/').slice(0, depth).join('/');
}

/** The pass (or item) index of the innermost level; -1 at the top level. */
export function iterationIndex(iteration: string): number {
  if (iteration === '') return -1;
  const last = iteration.slice(iteration.lastIndexOf('/') + 1);
  return Number(last);
}

/** The key of the container instance a key belongs to (everything but the last level). */
export function parentIteration(iteration: string): string {
  const at = iteration.lastIndexOf('/');
  return at < 0 ? '' : iteration.slice(0, at);
}

/**
 * The iteration of node `ref` as seen from `iteration`: nodes of the same body share the key, nodes of an
 * enclosing scope are at the matching prefix.
 */
export function refIteration(graph: Graph, ref: string, iteration: string): string {
  return iterationPrefix(iteration, graph.depth.get(ref) ?? 0);
}
