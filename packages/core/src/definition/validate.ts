import { compileMapping } from '../expr/mapping.js';
import { compileSchema } from '../schema.js';
import { ancestorsOf, buildGraph, findCycle, kahn } from './graph.js';
import { type DefinitionProblem, suggest } from './problems.js';
import type { Definition } from './types.js';

/**
 * Checks a definition's graph and expressions: no empty graph, no duplicate node ids, no edges to unknown
 * nodes or to themselves, no cycles (Kahn's algorithm), expressions that parse and read only nodes that
 * run before them, and an input schema that compiles. Returns every problem found (none: it is valid).
 */
export function validateDefinition(
  def: Definition,
  alsoKnown: ReadonlySet<string> = new Set(),
): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  if (def.nodes.length === 0 && alsoKnown.size === 0) {
    problems.push({ line: 0, path: 'nodes', message: 'the graph is empty: add at least one node' });
    return problems;
  }
  if (def.nodes.length === 0) return problems;
  const firstLine = new Map<string, number>();
  for (const node of def.nodes) {
    const earlier = firstLine.get(node.id);
    if (earlier !== undefined) {
      problems.push({
        line: node.line,
        node: node.id,
        path: 'nodes',
        message: `node id "${node.id}" is used twice${earlier > 0 ? ` (first on line ${earlier})` : ''}; ids must be unique`,
      });
    } else firstLine.set(node.id, node.line);
  }
  const ids = [...firstLine.keys()];
  const seenEdges = new Set<string>();
  def.edges.forEach((edge, index) => {
    const path = `edges[${index}]`;
    for (const end of [edge.from, edge.to]) {
      if (!firstLine.has(end) && !alsoKnown.has(end)) {
        const hint = suggest(end, ids);
        problems.push({
          line: edge.line,
          path,
          message: `edge ${edge.from} -> ${edge.to}: there is no node "${end}"${hint ? ` (did you mean "${hint}"?)` : ''}`,
        });
      }
    }
    if (edge.from === edge.to) {
      problems.push({
        line: edge.line,
        node: edge.from,
        path,
        message: `edge ${edge.from} -> ${edge.to} points at its own node`,
      });
    }
    const key = `${edge.from}\u0000${edge.to}`;
    if (seenEdges.has(key)) {
      problems.push({ line: edge.line, path, message: `edge ${edge.from} -> ${edge.to} is listed twice` });
    }
    seenEdges.add(key);
  });
  const graph = buildGraph(def);
  const { blocked } = kahn(graph.nodes, graph.successors, graph.predecessors);
  if (blocked.length > 0) {
    const cycle = findCycle(blocked, graph.successors);
    const start = cycle[0] ?? blocked[0]!;
    problems.push({
      line: graph.nodes.get(start)?.line ?? 0,
      node: start,
      path: 'edges',
      message: `the graph has a cycle: ${cycle.join(' -> ')}; a workflow graph must be acyclic`,
    });
  }
  for (const [index, node] of def.nodes.entries()) {
    if (node.kind !== 'task' || node.input === null) continue;
    const compiled = compileMapping(node.input, 'input');
    if (!compiled.ok) {
      for (const p of compiled.error) {
        problems.push({
          line: node.line,
          node: node.id,
          path: `nodes[${index}].${p.path}`,
          message: `${p.path}: ${p.message}`,
        });
      }
      continue;
    }
    const before = blocked.length > 0 ? null : ancestorsOf(graph, node.id);
    for (const dynamic of compiled.value.dynamicRefs) {
      problems.push({
        line: node.line,
        node: node.id,
        path: `nodes[${index}].input`,
        message: `input reads ${dynamic}; name the node you need, as nodes.<id>.output`,
      });
    }
    for (const ref of compiled.value.refs) {
      if (alsoKnown.has(ref) && !firstLine.has(ref)) continue;
      if (!firstLine.has(ref)) {
        const hint = suggest(ref, ids);
        problems.push({
          line: node.line,
          node: node.id,
          path: `nodes[${index}].input`,
          message: `input reads nodes.${ref}, but there is no node "${ref}"${hint ? ` (did you mean "${hint}"?)` : ''}`,
        });
      } else if (before && !before.has(ref)) {
        problems.push({
          line: node.line,
          node: node.id,
          path: `nodes[${index}].input`,
          message: `input reads nodes.${ref}, which does not run before "${node.id}"; add an edge path from "${ref}" to "${node.id}"`,
        });
      }
    }
  }
  if (def.output !== null) {
    const compiled = compileMapping(def.output, 'output');
    if (!compiled.ok) {
      for (const p of compiled.error)
        problems.push({ line: 0, path: p.path, message: `${p.path}: ${p.message}` });
    } else {
      for (const ref of compiled.value.refs) {
        if (!firstLine.has(ref))
          problems.push({
            line: 0,
            path: 'output',
            message: `output reads nodes.${ref}, but there is no node "${ref}"`,
          });
      }
      for (const dynamic of compiled.value.dynamicRefs) {
        problems.push({
          line: 0,
          path: 'output',
          message: `output reads ${dynamic}; name the node you need, as nodes.<id>.output`,
        });
      }
    }
  }
  if (def.inputSchema) {
    const schema = compileSchema(def.inputSchema);
    if (!schema.ok)
      problems.push({
        line: 0,
        path: 'input_schema',
        message: `input_schema is not a valid JSON Schema: ${schema.error}`,
      });
  }
  return problems;
}
