import type { Workflow } from '../../definition/workflow.js';

/** A node instance: node id and iteration. */
export interface Instance {
  readonly nodeId: string;
  readonly iteration: string;
}

/** Instances sorted so that every edge goes forward (then by iteration), for decisions and history. */
export function inGraphOrder<T extends Instance>(workflow: Workflow, instances: readonly T[]): T[] {
  const order = new Map(workflow.graph.order.map((id, i) => [id, i]));
  return [...instances].sort(
    (a, b) =>
      (order.get(a.nodeId) ?? 0) - (order.get(b.nodeId) ?? 0) || a.iteration.localeCompare(b.iteration),
  );
}

/** A short name of an instance for history: `node` or `node[iteration]`. */
export function instanceLabel(t: Instance): string {
  return t.iteration ? `${t.nodeId}[${t.iteration}]` : t.nodeId;
}
