import { allNodes, isContainer } from './containers.js';
import type { BrokenParts } from './draft.js';
import type { Graph } from './graph.js';
import type { EdgeDef } from './node-types.js';
import type { DefinitionProblem } from './problems.js';
import type { Definition } from './types.js';

/**
 * Checks edge labels against the nodes they leave: `case` and `default` only out of a switch, and every
 * edge out of a switch has one; `on: timeout` only out of a wait_for_event that has a timeout.
 */
export function validateEdgeLabels(def: Definition, graph: Graph, broken: BrokenParts): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  const scopes: (readonly EdgeDef[])[] = [def.edges];
  for (const { node } of allNodes(def.nodes)) if (isContainer(node)) scopes.push(node.body.edges);
  const outgoing = new Map<string, EdgeDef[]>();
  for (const edges of scopes) {
    for (const edge of edges) {
      const list = outgoing.get(edge.from) ?? [];
      list.push(edge);
      outgoing.set(edge.from, list);
      const from = graph.nodes.get(edge.from);
      // A stand-in for a node that could not be read has no kind to judge labels by.
      if (!from || !edge.when || broken.nodes.has(from)) continue;
      const at = { line: edge.line, node: edge.from, path: 'edges' };
      if ((edge.when.kind === 'case' || edge.when.kind === 'default') && from.kind !== 'switch') {
        problems.push({
          ...at,
          message: `edge ${edge.from} -> ${edge.to}: ${edge.when.kind} is only for edges out of a switch node, and "${edge.from}" is a ${from.kind} node`,
        });
      }
      if (edge.when.kind === 'timeout') {
        if (from.kind !== 'wait_for_event') {
          problems.push({
            ...at,
            message: `edge ${edge.from} -> ${edge.to}: on: timeout is only for edges out of a wait_for_event node, and "${edge.from}" is a ${from.kind} node`,
          });
        } else if (from.timeoutMs === null) {
          problems.push({
            ...at,
            message: `edge ${edge.from} -> ${edge.to}: on: timeout, but "${edge.from}" has no timeout; give it one (like timeout: 2d)`,
          });
        }
      }
    }
  }
  for (const { node } of allNodes(def.nodes)) {
    if (node.kind !== 'switch') continue;
    const edges = outgoing.get(node.id) ?? [];
    if (edges.length === 0) {
      problems.push({
        line: node.line,
        node: node.id,
        path: 'edges',
        message: `switch "${node.id}" has no outgoing edges; add edges with case: <value> (and one with default: true)`,
      });
    }
    for (const edge of edges) {
      if (edge.when || broken.edges.has(edge)) continue;
      problems.push({
        line: edge.line,
        node: node.id,
        path: 'edges',
        message: `edge ${edge.from} -> ${edge.to} leaves switch "${node.id}" without a label; give it case: <value> or default: true`,
      });
    }
  }
  return problems;
}
