import { compileMapping } from '../expr/mapping.js';
import { compileSchema } from '../schema.js';
import { allNodes, isContainer } from './containers.js';
import { type BrokenParts, NOTHING_BROKEN } from './draft.js';
import { ancestorsOf, buildGraph, findCycle, type Graph, kahn } from './graph.js';
import { nodeMappings } from './mappings.js';
import type { EdgeDef, NodeDef } from './node-types.js';
import { type DefinitionProblem, suggest } from './problems.js';
import type { Definition } from './types.js';
import { validateEdgeLabels } from './validate-edge-labels.js';
import { validateHumanNodes } from './validate-human.js';

/**
 * Checks a definition's graph and expressions: no empty graph or body, no duplicate node ids, no edges to
 * unknown nodes, to themselves or across a body's boundary, no cycles (Kahn's algorithm), edge labels
 * that fit their node, expressions that parse and read only nodes that run before them, and an input
 * schema that compiles. Returns every problem found (none: it is valid). `broken` names what reading could
 * not read as written: those nodes take part in the graph checks but not in those that need their shape.
 */
export function validateDefinition(
  def: Definition,
  broken: BrokenParts = NOTHING_BROKEN,
): DefinitionProblem[] {
  if (def.nodes.length === 0)
    return [{ line: 0, path: 'nodes', message: 'the graph is empty: add at least one node' }];
  const problems: DefinitionProblem[] = [];
  const every = allNodes(def.nodes);
  problems.push(...duplicateIds(every.map((e) => e.node)));
  const graph = buildGraph(def);
  checkEdges(def.edges, 'edges', null, graph, problems);
  for (const { node } of every) {
    if (!isContainer(node)) continue;
    const what = `the body of ${node.kind} "${node.id}"`;
    if (node.body.nodes.length === 0)
      problems.push({
        line: node.line,
        node: node.id,
        path: 'body',
        message: `${what} is empty: add at least one node`,
      });
    checkEdges(node.body.edges, `${what}: edges`, node.id, graph, problems);
  }
  const acyclic = checkCycles(graph, problems);
  problems.push(...validateEdgeLabels(def, graph, broken));
  for (const { node } of every) {
    if (!broken.nodes.has(node)) problems.push(...nodeExpressionProblems(graph, node, acyclic));
  }
  problems.push(...outputProblems(def, graph));
  problems.push(...validateHumanNodes(def));
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

/** Every id used by more than one node (bodies included), at each repeat. */
function duplicateIds(nodes: readonly NodeDef[]): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  const firstLine = new Map<string, number>();
  for (const node of nodes) {
    const earlier = firstLine.get(node.id);
    if (earlier === undefined) {
      firstLine.set(node.id, node.line);
      continue;
    }
    problems.push({
      line: node.line,
      node: node.id,
      path: 'nodes',
      message: `node id "${node.id}" is used twice${earlier > 0 ? ` (first on line ${earlier})` : ''}; ids must be unique`,
    });
  }
  return problems;
}

/** Reports one cycle, if the graph has any (Kahn's algorithm); true when it has none. */
function checkCycles(graph: Graph, problems: DefinitionProblem[]): boolean {
  const { blocked } = kahn(graph.nodes, graph.successors, graph.predecessors);
  if (blocked.length === 0) return true;
  const cycle = findCycle(blocked, graph.successors);
  const start = cycle[0] ?? blocked[0]!;
  problems.push({
    line: graph.nodes.get(start)?.line ?? 0,
    node: start,
    path: 'edges',
    message: `the graph has a cycle: ${cycle.join(' -> ')}; a workflow graph must be acyclic (repeat work with a loop node)`,
  });
  return false;
}

/** A node's expressions: each parses, names the nodes it reads, and reads only nodes that run before it. */
function nodeExpressionProblems(graph: Graph, node: NodeDef, acyclic: boolean): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  const at = { line: node.line, node: node.id };
  for (const m of nodeMappings(node)) {
    const compiled = compileMapping(m.source, m.field);
    if (!compiled.ok) {
      for (const p of compiled.error)
        problems.push({ ...at, path: p.path, message: `${p.path}: ${p.message}` });
      continue;
    }
    for (const dynamic of compiled.value.dynamicRefs) {
      const message = `${m.field} reads ${dynamic}; name the node you need, as nodes.<id>.output`;
      problems.push({ ...at, path: m.field, message });
    }
    for (const ref of compiled.value.refs) {
      const why = refProblem(graph, node, ref, m.reads, acyclic);
      if (why) problems.push({ ...at, path: m.field, message: `${m.field} reads ${why}` });
    }
  }
  return problems;
}

/** The run output mapping: it parses and reads only top-level nodes that exist. */
function outputProblems(def: Definition, graph: Graph): DefinitionProblem[] {
  if (def.output === null) return [];
  const compiled = compileMapping(def.output, 'output');
  if (!compiled.ok)
    return compiled.error.map((p) => ({ line: 0, path: p.path, message: `${p.path}: ${p.message}` }));
  const problems: DefinitionProblem[] = [];
  for (const ref of compiled.value.refs) {
    if (!graph.nodes.has(ref))
      problems.push({
        line: 0,
        path: 'output',
        message: `output reads nodes.${ref}, but there is no node "${ref}"`,
      });
    else if (graph.parent.get(ref) !== null)
      problems.push({ line: 0, path: 'output', message: `output reads ${insideBody(graph, ref)}` });
  }
  for (const dynamic of compiled.value.dynamicRefs) {
    const message = `output reads ${dynamic}; name the node you need, as nodes.<id>.output`;
    problems.push({ line: 0, path: 'output', message });
  }
  return problems;
}

/** Checks one scope's edges: known endpoints in that scope, no self edges, no duplicates. */
function checkEdges(
  edges: readonly EdgeDef[],
  label: string,
  scope: string | null,
  graph: Graph,
  problems: DefinitionProblem[],
): void {
  const ids = [...graph.nodes.keys()].filter((id) => graph.parent.get(id) === scope);
  const seen = new Set<string>();
  edges.forEach((edge, index) => {
    const path = scope === null ? `edges[${index}]` : `${label}[${index}]`;
    for (const end of [edge.from, edge.to]) {
      if (!graph.nodes.has(end)) {
        const hint = suggest(end, ids);
        problems.push({
          line: edge.line,
          path,
          message: `${scope === null ? '' : `${label.replace(/: edges$/, '')}: `}edge ${edge.from} -> ${edge.to}: there is no node "${end}"${hint ? ` (did you mean "${hint}"?)` : ''}`,
        });
      } else if (graph.parent.get(end) !== scope) {
        const home = graph.parent.get(end);
        problems.push({
          line: edge.line,
          node: end,
          path,
          message: `edge ${edge.from} -> ${edge.to}: "${end}" is ${home ? `inside the body of "${home}"` : 'a top-level node'}, so this edge would cross a body's boundary; edges stay within one body (or the top level)`,
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
    if (seen.has(key)) {
      problems.push({ line: edge.line, path, message: `edge ${edge.from} -> ${edge.to} is listed twice` });
    }
    seen.add(key);
  });
}

/**
 * Why `reader` may not read `nodes.<ref>`, or null when it may. A node reads nodes of its own scope that
 * run before it, and nodes of enclosing scopes that run before the loop or map around it. A loop's
 * `while` and a body's `output` (`reads: body`) also read every node of that body.
 */
function refProblem(
  graph: Graph,
  reader: NodeDef,
  ref: string,
  reads: 'before' | 'body' | 'self',
  acyclic: boolean,
): string | null {
  if (!graph.nodes.has(ref)) {
    const hint = suggest(ref, [...graph.nodes.keys()]);
    return `nodes.${ref}, but there is no node "${ref}"${hint ? ` (did you mean "${hint}"?)` : ''}`;
  }
  const home = graph.parent.get(ref) ?? null;
  if (reads === 'body' && home === reader.id) return null;
  if (reads === 'self' && ref === reader.id) return null;
  // The node at `home`'s level that is the reader or holds it.
  let at: string | null = reader.id;
  while (at !== null && (graph.parent.get(at) ?? null) !== home) at = graph.parent.get(at) ?? null;
  if (at === null) return insideBody(graph, ref, reader);
  if (!acyclic) return null;
  if (ancestorsOf(graph, at).has(ref)) return null;
  if (at === reader.id)
    return `nodes.${ref}, which does not run before "${reader.id}"; add an edge path from "${ref}" to "${reader.id}"`;
  return `nodes.${ref}, which does not run before "${at}" (the ${graph.nodes.get(at)?.kind} around "${reader.id}"); add an edge path from "${ref}" to "${at}"`;
}

/** Explains that a node inside a body is read from outside that body. */
function insideBody(graph: Graph, ref: string, reader?: NodeDef): string {
  const around = new Set<string>();
  for (
    let at = reader ? (graph.parent.get(reader.id) ?? null) : null;
    at !== null;
    at = graph.parent.get(at) ?? null
  )
    around.add(at);
  // The outermost loop or map holding `ref` that does not also hold the reader.
  let container = graph.parent.get(ref)!;
  for (
    let at = graph.parent.get(ref) ?? null;
    at !== null && !around.has(at);
    at = graph.parent.get(at) ?? null
  )
    container = at;
  const kind = graph.nodes.get(container)?.kind;
  const unit = kind === 'loop' ? 'pass' : 'item';
  return `nodes.${ref}, which is inside the body of ${kind} "${container}" and runs once per ${unit}; read its results through nodes.${container}.output (a list, one entry per ${unit})`;
}
