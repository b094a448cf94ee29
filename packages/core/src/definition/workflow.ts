import { createHash } from 'node:crypto';
import { type CompiledMapping, compileMapping } from '../expr/mapping.js';
import { canonicalJson } from '../json.js';
import { compensationNodeId, SAGA_LOG_NODE } from './compensation.js';
import { allNodes, isContainer } from './containers.js';
import { deepFreeze } from './freeze.js';
import { buildGraph, type Graph, sortedEdges } from './graph.js';
import { nodeMappings } from './mappings.js';
import type { NodeDef, TaskNode } from './node-types.js';
import type { Definition } from './types.js';

/** A validated definition with its graph indexes and parsed expressions, ready for the decider. */
export interface Workflow {
  readonly definition: Definition;
  readonly graph: Graph;
  /** The node with this id; throws for an unknown id (a definition/version mix-up, never user input). */
  node(id: string): NodeDef;
  /** The parsed mapping of a node (a task's input, an event's payload, an http request), or null. */
  inputMapping(id: string): CompiledMapping | null;
  /** The parsed mapping of one of a node's expression fields (see `nodeMappings`), or null when absent. */
  mapping(id: string, field: string): CompiledMapping | null;
  /** The parsed run output mapping, or null for the default output. */
  readonly outputMapping: CompiledMapping | null;
  /** Names of the signals some wait_for_event node waits for. */
  readonly signals: ReadonlySet<string>;
  /** True when some task node names a compensation (the run keeps a saga log). */
  readonly compensable: boolean;
}

/** Prepares a definition that has passed validation (and freezes it: the decider never changes it). */
export function compileWorkflow(definition: Definition): Workflow {
  deepFreeze(definition);
  const graph = buildGraph(definition);
  const mappings = new Map<string, CompiledMapping>();
  const signals = new Set<string>();
  // Rows that are not nodes of the graph: compensations (as task nodes of their own) and the saga log.
  const extra = new Map<string, NodeDef>();
  for (const { node } of allNodes(definition.nodes)) {
    if (node.kind === 'wait_for_event') signals.add(node.event);
    if (node.kind === 'task' && node.compensate)
      extra.set(compensationNodeId(node.id), compensationNode(node));
    for (const m of nodeMappings(node)) {
      const compiled = compileMapping(m.source, m.field);
      if (!compiled.ok)
        throw new Error(`definition ${definition.name} was not validated: ${compiled.error[0]?.message}`);
      mappings.set(`${node.id}\u0000${m.field}`, compiled.value);
    }
  }
  if (extra.size > 0) extra.set(SAGA_LOG_NODE, { kind: 'noop', id: SAGA_LOG_NODE, line: 0, join: 'all' });
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
      const node = graph.nodes.get(id) ?? extra.get(id);
      if (!node) throw new Error(`definition ${definition.name} has no node "${id}"`);
      return node;
    },
    inputMapping: (id) => mappings.get(`${id}\u0000input`) ?? null,
    mapping: (id, field) => mappings.get(`${id}\u0000${field}`) ?? null,
    outputMapping,
    signals,
    compensable: extra.size > 0,
  };
}

/** A compensation as the task node its attempts are rows of (it is in no edge of the graph). */
function compensationNode(node: TaskNode): TaskNode {
  const c = node.compensate!;
  return {
    kind: 'task',
    id: compensationNodeId(node.id),
    line: node.line,
    join: 'all',
    taskType: c.taskType,
    input: null,
    retry: c.retry,
    timeoutMs: c.timeoutMs,
    priority: node.priority,
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
  // Bodies of loops and maps are normalised the same way, all the way down.
  const normal = (list: readonly NodeDef[]): unknown[] =>
    [...list]
      .sort((a, b) => a.id.localeCompare(b.id))
      .map((n) =>
        isContainer(n)
          ? {
              ...stripLine(n),
              body: {
                ...n.body,
                nodes: normal(n.body.nodes),
                edges: sortedEdges(n.body.edges).map(stripLine),
              },
            }
          : stripLine(n),
      );
  const nodes = normal(definition.nodes);
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
