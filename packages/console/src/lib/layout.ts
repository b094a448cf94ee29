import { Graph, layout } from '@dagrejs/dagre';
import type { GraphEdge, GraphNode } from '../api/types.js';

/** Size of a node box on the graph, in pixels. */
export const NODE_WIDTH = 180;
export const NODE_HEIGHT = 64;

/** A node's position (its top-left corner) after layout. */
export interface Placed {
  readonly id: string;
  readonly x: number;
  readonly y: number;
}

/**
 * Lays a definition's graph out left to right with dagre (a layered layout: every edge points forward,
 * parallel branches stack up and down).
 */
export function layoutGraph(nodes: readonly GraphNode[], edges: readonly GraphEdge[]): Placed[] {
  const g = new Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 28, ranksep: 64, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const node of nodes) g.setNode(node.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const edge of edges) if (g.hasNode(edge.from) && g.hasNode(edge.to)) g.setEdge(edge.from, edge.to);
  layout(g);
  return nodes.map((node) => {
    const at = g.node(node.id) as { x: number; y: number };
    return { id: node.id, x: at.x - NODE_WIDTH / 2, y: at.y - NODE_HEIGHT / 2 };
  });
}

/** The words an edge carries on the graph: the switch case, `default`, or `timeout`. */
export function edgeLabel(edge: GraphEdge): string | undefined {
  if (!edge.when) return undefined;
  if (edge.when.kind === 'case') return edge.when.values.map((v) => JSON.stringify(v)).join(' | ');
  return edge.when.kind;
}
