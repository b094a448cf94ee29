import type { ContainerNode, NodeDef } from './node-types.js';

/** True for a loop or a map: a node that holds a body sub-graph. */
export function isContainer(node: NodeDef): node is ContainerNode {
  return node.kind === 'loop' || node.kind === 'map';
}

/** Every node of a definition, bodies included, with the container each one belongs to (null at the top). */
export function allNodes(
  nodes: readonly NodeDef[],
  parent: string | null = null,
): { node: NodeDef; parent: string | null }[] {
  const out: { node: NodeDef; parent: string | null }[] = [];
  for (const node of nodes) {
    out.push({ node, parent });
    if (isContainer(node)) out.push(...allNodes(node.body.nodes, node.id));
  }
  return out;
}
