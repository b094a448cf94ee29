import type { DecisionContext } from './context.js';

/**
 * Edges taken only on some outcomes of their node: a wait_for_event's `on: timeout` edges (the others are
 * taken when its signal comes), and a human node's deadline edges (taken only when its deadline passes).
 */

/** Targets of a wait_for_event node's `on: timeout` edges (`timeout` true), or of its other edges. */
export function signalEdgeTargets(ctx: DecisionContext, nodeId: string, timeout: boolean): Set<string> {
  const graph = ctx.workflow.graph;
  return new Set(
    (graph.successors.get(nodeId) ?? []).filter(
      (t) => (graph.labels.get(`${nodeId}\u0000${t}`)?.kind === 'timeout') === timeout,
    ),
  );
}

/** True when the edge from `from` to `to` is a human node's deadline edge. */
export function isDeadlineEdge(ctx: DecisionContext, from: string, to: string): boolean {
  const node = ctx.workflow.node(from);
  return node.kind === 'human' && node.deadline !== null && node.deadline.to.includes(to);
}
