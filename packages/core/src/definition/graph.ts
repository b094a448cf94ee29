import type { Definition, EdgeDef, NodeDef } from './types.js';

/** Indexes over a definition's graph, computed once per definition version. */
export interface Graph {
  readonly nodes: ReadonlyMap<string, NodeDef>;
  readonly successors: ReadonlyMap<string, readonly string[]>;
  readonly predecessors: ReadonlyMap<string, readonly string[]>;
  /** Nodes with no incoming edge: they start when the run starts. */
  readonly entries: readonly string[];
  /** Nodes with no outgoing edge: the run completes when all of them are done or skipped. */
  readonly sinks: readonly string[];
  /** Nodes in an order where every edge goes forward (only meaningful for an acyclic graph). */
  readonly order: readonly string[];
}

/** Builds the graph indexes. Edges that name unknown nodes are ignored here (validation reports them). */
export function buildGraph(def: Pick<Definition, 'nodes' | 'edges'>): Graph {
  const nodes = new Map<string, NodeDef>();
  for (const node of def.nodes) if (!nodes.has(node.id)) nodes.set(node.id, node);
  const successors = new Map<string, string[]>();
  const predecessors = new Map<string, string[]>();
  for (const id of nodes.keys()) {
    successors.set(id, []);
    predecessors.set(id, []);
  }
  const seen = new Set<string>();
  for (const edge of def.edges) {
    const key = `${edge.from}\u0000${edge.to}`;
    if (!nodes.has(edge.from) || !nodes.has(edge.to) || edge.from === edge.to || seen.has(key)) continue;
    seen.add(key);
    successors.get(edge.from)!.push(edge.to);
    predecessors.get(edge.to)!.push(edge.from);
  }
  const entries = [...nodes.keys()].filter((id) => predecessors.get(id)!.length === 0);
  const sinks = [...nodes.keys()].filter((id) => successors.get(id)!.length === 0);
  const { order } = kahn(nodes, successors, predecessors);
  return { nodes, successors, predecessors, entries, sinks, order };
}

/**
 * Kahn's algorithm: repeatedly removes nodes with no remaining incoming edge. Whatever cannot be removed
 * lies on a cycle or downstream of one.
 */
export function kahn(
  nodes: ReadonlyMap<string, unknown>,
  successors: ReadonlyMap<string, readonly string[]>,
  predecessors: ReadonlyMap<string, readonly string[]>,
): { order: string[]; blocked: string[] } {
  const indegree = new Map<string, number>();
  for (const id of nodes.keys()) indegree.set(id, predecessors.get(id)?.length ?? 0);
  const ready = [...nodes.keys()].filter((id) => indegree.get(id) === 0);
  const order: string[] = [];
  while (ready.length > 0) {
    const id = ready.shift()!;
    order.push(id);
    for (const next of successors.get(id) ?? []) {
      const left = indegree.get(next)! - 1;
      indegree.set(next, left);
      if (left === 0) ready.push(next);
    }
  }
  const done = new Set(order);
  return { order, blocked: [...nodes.keys()].filter((id) => !done.has(id)) };
}

/** Finds one concrete cycle among `blocked` nodes (as left by Kahn's algorithm), as a closed path. */
export function findCycle(
  blocked: readonly string[],
  successors: ReadonlyMap<string, readonly string[]>,
): string[] {
  const inBlocked = new Set(blocked);
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (id: string): string[] | null => {
    state.set(id, 'open');
    stack.push(id);
    for (const next of successors.get(id) ?? []) {
      if (!inBlocked.has(next)) continue;
      if (state.get(next) === 'open') return [...stack.slice(stack.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(id, 'done');
    return null;
  };
  for (const id of blocked) {
    if (state.has(id)) continue;
    const found = visit(id);
    if (found) return found;
  }
  return [];
}

/** Every node from which `id` can be reached (its ancestors). */
export function ancestorsOf(graph: Graph, id: string): Set<string> {
  const out = new Set<string>();
  const todo = [...(graph.predecessors.get(id) ?? [])];
  while (todo.length > 0) {
    const next = todo.pop()!;
    if (out.has(next)) continue;
    out.add(next);
    todo.push(...(graph.predecessors.get(next) ?? []));
  }
  return out;
}

/** Every node reachable from `id`, `id` included. */
export function downstreamOf(graph: Graph, id: string): Set<string> {
  const out = new Set<string>();
  const todo = [id];
  while (todo.length > 0) {
    const next = todo.pop()!;
    if (out.has(next)) continue;
    out.add(next);
    todo.push(...(graph.successors.get(next) ?? []));
  }
  return out;
}

/** The edge list in a stable order, for hashing and display. */
export function sortedEdges(edges: readonly EdgeDef[]): EdgeDef[] {
  return [...edges].sort((a, b) =>
    a.from === b.from ? a.to.localeCompare(b.to) : a.from.localeCompare(b.from),
  );
}
