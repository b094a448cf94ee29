import { allNodes, isContainer } from './containers.js';
import type { EdgeDef, EdgeWhen, NodeDef } from './node-types.js';
import type { Definition } from './types.js';

/** Entry and last nodes of one body sub-graph. */
export interface BodyScope {
  /** Body nodes with no incoming edge: they start when a pass (or item) starts. */
  readonly entries: readonly string[];
  /** Body nodes with no outgoing edge: the pass (or item) is done when all of them are done or skipped. */
  readonly sinks: readonly string[];
}

/** Indexes over a definition's graph, computed once per definition version. */
export interface Graph {
  /** Every node, those inside loop and map bodies included (ids are unique across the definition). */
  readonly nodes: ReadonlyMap<string, NodeDef>;
  readonly successors: ReadonlyMap<string, readonly string[]>;
  readonly predecessors: ReadonlyMap<string, readonly string[]>;
  /** Top-level nodes with no incoming edge: they start when the run starts. */
  readonly entries: readonly string[];
  /** Top-level nodes with no outgoing edge: the run completes when all of them are done or skipped. */
  readonly sinks: readonly string[];
  /** Top-level nodes in an order where every edge goes forward (only meaningful for an acyclic graph). */
  readonly order: readonly string[];
  /** The loop or map whose body holds each node; null for top-level nodes. */
  readonly parent: ReadonlyMap<string, string | null>;
  /** How many loops and maps enclose each node (0 at the top level). */
  readonly depth: ReadonlyMap<string, number>;
  /** Entries and sinks of each loop's or map's body, by the container's id. */
  readonly bodies: ReadonlyMap<string, BodyScope>;
  /** Labels of edges out of switches and wait_for_event nodes, by `from\u0000to`. */
  readonly labels: ReadonlyMap<string, EdgeWhen>;
}

/**
 * Builds the graph indexes. Edges that name unknown nodes, or cross the boundary of a body, are ignored
 * here (validation reports them).
 */
export function buildGraph(def: Pick<Definition, 'nodes' | 'edges'>): Graph {
  const nodes = new Map<string, NodeDef>();
  const parent = new Map<string, string | null>();
  const depth = new Map<string, number>();
  for (const { node, parent: p } of allNodes(def.nodes)) {
    if (nodes.has(node.id)) continue;
    nodes.set(node.id, node);
    parent.set(node.id, p);
    depth.set(node.id, p === null ? 0 : (depth.get(p) ?? 0) + 1);
  }
  const successors = new Map<string, string[]>();
  const predecessors = new Map<string, string[]>();
  for (const id of nodes.keys()) {
    successors.set(id, []);
    predecessors.set(id, []);
  }
  const labels = new Map<string, EdgeWhen>();
  const seen = new Set<string>();
  const addEdges = (edges: readonly EdgeDef[], scope: string | null) => {
    for (const edge of edges) {
      const key = `${edge.from}\u0000${edge.to}`;
      if (!nodes.has(edge.from) || !nodes.has(edge.to) || edge.from === edge.to || seen.has(key)) continue;
      if (parent.get(edge.from) !== scope || parent.get(edge.to) !== scope) continue;
      seen.add(key);
      successors.get(edge.from)!.push(edge.to);
      predecessors.get(edge.to)!.push(edge.from);
      if (edge.when) labels.set(key, edge.when);
    }
  };
  addEdges(def.edges, null);
  const bodies = new Map<string, BodyScope>();
  for (const { node } of allNodes(def.nodes)) {
    if (!isContainer(node) || bodies.has(node.id)) continue;
    addEdges(node.body.edges, node.id);
  }
  const ends = (ids: readonly string[]) => ({
    entries: ids.filter((id) => predecessors.get(id)!.length === 0),
    sinks: ids.filter((id) => successors.get(id)!.length === 0),
  });
  for (const { node } of allNodes(def.nodes)) {
    if (!isContainer(node) || bodies.has(node.id)) continue;
    bodies.set(node.id, ends([...new Set(node.body.nodes.map((n) => n.id))].filter((id) => nodes.has(id))));
  }
  const top = [...nodes.keys()].filter((id) => parent.get(id) === null);
  const { entries, sinks } = ends(top);
  const topNodes = new Map(top.map((id) => [id, nodes.get(id)!]));
  const { order } = kahn(topNodes, successors, predecessors);
  return { nodes, successors, predecessors, entries, sinks, order, parent, depth, bodies, labels };
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
