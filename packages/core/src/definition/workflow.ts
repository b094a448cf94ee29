import { createHash } from 'node:crypto';
import { type CompiledMapping, compileMapping } from '../expr/mapping.js';
import { canonicalJson } from '../json.js';
import { buildGraph, type Graph, sortedEdges } from './graph.js';
import type { Definition, NodeDef } from './types.js';

/** A validated definition with its graph indexes and parsed expressions, ready for the decider. */
export interface Workflow {
  readonly definition: Definition;
  readonly graph: Graph;
  /** The node with this id; throws for an unknown id (a definition/version mix-up, never user input). */
  node(id: string): NodeDef;
  /** The parsed input mapping of a task node, or null when it has none. */
  inputMapping(id: string): CompiledMapping | null;
  /** The parsed run output mapping, or null for the default output. */
  readonly outputMapping: CompiledMapping | null;
}

/** Prepares a definition that has passed validation. */
export function compileWorkflow(definition: Definition): Workflow {
  const graph = buildGraph(definition);
  const inputs = new Map<string, CompiledMapping>();
  for (const node of definition.nodes) {
    if (node.kind === 'task' && node.input !== null) {
      const compiled = compileMapping(node.input, 'input');
      if (!compiled.ok)
        throw new Error(`definition ${definition.name} was not validated: ${compiled.error[0]?.message}`);
      inputs.set(node.id, compiled.value);
    }
  }
  let outputMapping: CompiledMapping | null = null;
  if (definition.output !== null) {
    const compiled = compileMapping(definition.output, 'output');
    if (!compiled.ok)
      throw new Error(`definition ${definition.name} was not validated: ${compiled.error[0]?.message}`);
    outputMapping = compiled.value;
  }
  return {
    definition,
    graph,
    node(id) {
      const node = graph.nodes.get(id);
      if (!node) throw new Error(`definition ${definition.name} has no node "${id}"`);
      return node;
    },
    inputMapping: (id) => inputs.get(id) ?? null,
    outputMapping,
  };
}

/**
 * A content hash of a definition: equal for definitions that mean the same (node order, lines and YAML
 * formatting do not count), different as soon as anything that changes behaviour does.
 */
export function definitionHash(definition: Definition): string {
  const stripLine = <T extends { line: number }>(x: T): Omit<T, 'line'> => {
    const { line: _line, ...rest } = x;
    return rest;
  };
  const nodes = [...definition.nodes].sort((a, b) => a.id.localeCompare(b.id)).map(stripLine);
  const edges = sortedEdges(definition.edges).map(stripLine);
  const text = canonicalJson({ ...definition, nodes, edges });
  return createHash('sha256').update(text).digest('hex');
}

/** Looks up a node of a given kind, for code that only handles that kind. */
export function nodeOfKind<K extends NodeDef['kind']>(
  workflow: Workflow,
  id: string,
  kind: K,
): Extract<NodeDef, { kind: K }> {
  const node = workflow.node(id);
  if (node.kind !== kind) throw new Error(`node "${id}" is a ${node.kind} node, not a ${kind} node`);
  return node as Extract<NodeDef, { kind: K }>;
}
