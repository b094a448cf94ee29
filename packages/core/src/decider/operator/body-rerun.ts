import type { Workflow } from '../../definition/workflow.js';
import { iterationDepth } from '../iterations.js';
import type { TaskState } from '../state.js';
import { instanceLabel } from './instances.js';

/**
 * Retry and rerun (an operator's) run node instances again by node and iteration, with placeholders
 * created up front. Loops and maps create their passes and items, and the instances in them, as they go,
 * so that scheme cannot re-open them: a retry or rerun whose work includes a loop or map, or a node
 * inside one, is refused (and, if one slipped through, decided as a no-op). Work around them is fine.
 */

/** True for an instance at its node's own level: not a loop's pass row or a map's item row. */
export function atOwnLevel(workflow: Workflow, t: { nodeId: string; iteration: string }): boolean {
  return iterationDepth(t.iteration) === (workflow.graph.depth.get(t.nodeId) ?? 0);
}

/** Why running these instances again would need a loop or map re-opened, or null when it would not. */
export function reopensBody(workflow: Workflow, instances: readonly TaskState[]): string | null {
  for (const t of instances) {
    const node = workflow.graph.nodes.get(t.nodeId);
    const container = workflow.graph.parent.get(t.nodeId) ?? null;
    if (node?.kind !== 'loop' && node?.kind !== 'map' && container === null) continue;
    const what =
      container === null ? `the ${node?.kind} "${t.nodeId}"` : `"${instanceLabel(t)}", inside "${container}"`;
    return `it would run ${what} again, and retry and rerun do not re-open loops and maps; start a new run instead`;
  }
  return null;
}
