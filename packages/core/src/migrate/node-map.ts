import { compensatedNodeOf, SAGA_LOG_NODE } from '../definition/compensation.js';
import type { Workflow } from '../definition/workflow.js';

/** Old node id to new node id, for the nodes whose id changed between two versions of a definition. */
export type NodeMap = Readonly<Record<string, string>>;

/** The id a node of the old version has in the new one. */
export function movedId(nodeMap: NodeMap, nodeId: string): string {
  return Object.hasOwn(nodeMap, nodeId) ? nodeMap[nodeId]! : nodeId;
}

/** True for the rows a run keeps besides its nodes' attempts: the saga log and compensations. */
export function isBookkeepingNode(nodeId: string): boolean {
  return nodeId === SAGA_LOG_NODE || compensatedNodeOf(nodeId) !== null;
}

/**
 * What is wrong with a node map between two versions, one sentence each (empty when it is usable): every
 * key a node of the old version, every value a node of the new one, no two keys onto one value, and no value
 * that is an id the old version uses itself (a swap or a chain of renames would make two attempts share an
 * identity while the rows are renamed).
 */
export function nodeMapProblems(from: Workflow, to: Workflow, nodeMap: NodeMap, toVersion: number): string[] {
  const problems: string[] = [];
  const targets = new Map<string, string>();
  for (const [old, next] of Object.entries(nodeMap)) {
    if (!from.graph.nodes.has(old))
      problems.push(
        `nodeMap names "${old}", which is not a node of the runs' version: use the old node ids as keys`,
      );
    if (!to.graph.nodes.has(next))
      problems.push(`nodeMap maps "${old}" to "${next}", which is not a node of version ${toVersion}`);
    const before = targets.get(next);
    if (before !== undefined)
      problems.push(
        `nodeMap maps both "${before}" and "${old}" to "${next}": map each node to a node of its own`,
      );
    targets.set(next, old);
    if (next !== old && from.graph.nodes.has(next))
      problems.push(
        `nodeMap maps "${old}" to "${next}", an id the runs' version uses too: rename to a new id, then rename back in a second move`,
      );
  }
  return problems;
}
