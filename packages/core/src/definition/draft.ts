import type { EdgeDef, NodeDef, RetryPolicy } from './node-types.js';
import type { DefinitionProblem } from './problems.js';

/** What a definition's `defaults` give every task node that does not say otherwise. */
export interface Defaults {
  readonly retry: RetryPolicy;
  readonly timeoutMs: number | null;
  readonly priority: number;
}

/**
 * The parts of a definition that could be read but not as written: a node whose kind or fields are broken
 * is kept as a stand-in (a noop, or its loop or map with the body that could be read) so that ids, edges
 * and cycles are still checked around it, and an edge whose label is broken is kept without it. The checks
 * that need a node's shape (its expressions, its edge labels) skip these.
 */
export interface BrokenParts {
  readonly nodes: ReadonlySet<NodeDef>;
  readonly edges: ReadonlySet<EdgeDef>;
}

/** Nothing broken: a definition built in code, or read without problems. */
export const NOTHING_BROKEN: BrokenParts = { nodes: new Set(), edges: new Set() };

/** What reading one definition collects: every problem, and the stand-ins for what could not be read. */
export class Draft {
  readonly problems: DefinitionProblem[] = [];
  readonly broken = { nodes: new Set<NodeDef>(), edges: new Set<EdgeDef>() };

  /** Keeps `node` as the stand-in of a node that could not be read as written. */
  brokenNode<N extends NodeDef>(node: N): N {
    this.broken.nodes.add(node);
    return node;
  }

  /** Keeps `edge` as read, without the label that could not be. */
  brokenEdge(edge: EdgeDef): EdgeDef {
    this.broken.edges.add(edge);
    return edge;
  }
}
