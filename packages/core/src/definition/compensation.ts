/**
 * Where a run keeps its compensations: the node ids their attempts and the saga log are stored under.
 * Node ids cannot contain a dot, so none of them ever meets a node of the graph.
 */

const SUFFIX = '.compensate';

/**
 * The node id a compensation's attempts are stored under: `<node>.compensate`, at the compensated
 * instance's iteration. Node ids cannot contain a dot, so it never meets a node of the graph.
 */
export function compensationNodeId(nodeId: string): string {
  return `${nodeId}${SUFFIX}`;
}

/** The compensated node of a compensation's node id, or null for any other id. */
export function compensatedNodeOf(nodeId: string): string | null {
  return nodeId.endsWith(SUFFIX) ? nodeId.slice(0, -SUFFIX.length) : null;
}

/**
 * The node id of a run's saga log: one row (iteration `''`) whose output lists the compensable node
 * instances in the order their completions were decided, and how far compensation has gone.
 */
export const SAGA_LOG_NODE = 'weft.saga';
