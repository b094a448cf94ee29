import type { MappingSource } from '../expr/mapping.js';
import type { JsonObject } from '../json.js';
import { isJsonObject } from '../json.js';
import { err, ok, type Result } from '../result.js';
import { deepFreeze } from './freeze.js';
import { describeLocated, type Located, parseLocated } from './located.js';
import type {
  EdgeDef,
  JoinMode,
  NodeCommon,
  NodeDef,
  NodeKind,
  RetryPolicy,
  TaskNode,
} from './node-types.js';
import { readCompensation } from './parse-compensation.js';
import { CONTROL_FLOW_KINDS, readControlFlowNode, readEdgeWhen } from './parse-control-flow.js';
import { readEffectNode, readStatusCallback } from './parse-effect-nodes.js';
import { deadlineEdges, readHumanNode } from './parse-human.js';
import { readLimits, readTaskGates } from './parse-limits.js';
import { readRetry } from './parse-retry.js';
import { MAX_DURATION_MS, NAME_PATTERN, NODE_ID_PATTERN, TASK_TYPE_PATTERN } from './patterns.js';
import type { DefinitionProblem } from './problems.js';
import { MapReader } from './reader.js';
import { DEFAULT_RETRY, type Definition } from './types.js';
import { validateDefinition } from './validate.js';

const NODE_KINDS: readonly NodeKind[] = [
  'task',
  'noop',
  'human',
  ...CONTROL_FLOW_KINDS,
  'sub_workflow',
  'start_workflow',
  'event',
  'http',
];

interface Defaults {
  readonly retry: RetryPolicy;
  readonly timeoutMs: number | null;
  readonly priority: number;
}

/**
 * Parses and validates a YAML definition. Every problem found is returned, each with its line and, where
 * it belongs to a node, the node id; nothing is returned half-valid. A valid definition comes back deeply
 * frozen.
 */
export function parseDefinition(text: string): Result<Definition, DefinitionProblem[]> {
  const { tree, problems: syntax } = parseLocated(text);
  if (!tree)
    return err(syntax.map((p) => ({ line: p.line, path: '', message: `YAML syntax: ${p.message}` })));
  const problems: DefinitionProblem[] = [];
  if (tree.kind !== 'map') {
    return err([
      {
        line: tree.line,
        path: '',
        message: `a definition must be a map with name, nodes and edges, not ${describeLocated(tree)}`,
      },
    ]);
  }
  const top = new MapReader(tree, '', problems);
  const name = top.string('name', {
    required: true,
    pattern: NAME_PATTERN,
    patternHint: 'is not a valid name: use letters, digits, ".", "_" and "-"',
  });
  const description = top.string('description');
  const inputSchema = top.json('input_schema');
  if (inputSchema !== undefined && inputSchema !== null && !isJsonObject(inputSchema)) {
    top.problem('must be a JSON Schema object', top.lineOf('input_schema'), 'input_schema');
  }
  const output = top.json('output');
  const defaults = readDefaults(top);
  const nodes = readNodes(top, defaults, problems, '');
  const edges = [...readEdges(top, problems, ''), ...deadlineEdges(nodes)];
  const limits = readLimits(top);
  const onStatus = readStatusCallback(top);
  top.done(
    'a definition (expected name, description, input_schema, output, defaults, nodes, edges, limits, on_status)',
  );
  const definition: Definition = {
    name: name ?? '',
    ...(description !== undefined ? { description } : {}),
    nodes,
    edges,
    inputSchema: isJsonObject(inputSchema) ? (inputSchema as JsonObject) : null,
    output: (output ?? null) as MappingSource | null,
    ...(limits ? { limits } : {}),
    ...(onStatus ? { onStatus } : {}),
  };
  if (problems.length > 0 || name === undefined) {
    // Report graph problems too, but not about nodes that exist in the YAML and failed to parse.
    const written = new Set(rawNodeIds(tree));
    const graphProblems = validateDefinition(definition, written);
    return err([
      ...problems,
      ...graphProblems.filter((p) => !problems.some((q) => q.line === p.line && q.message === p.message)),
    ]);
  }
  const checked = validateDefinition(definition);
  return checked.length > 0 ? err(checked) : ok(deepFreeze(definition));
}

/** Node ids as written, valid or not, those inside loop and map bodies included. */
function rawNodeIds(tree: Extract<Located, { kind: 'map' }>): string[] {
  const nodes = tree.entries.find((e) => e.key === 'nodes')?.value;
  if (nodes?.kind !== 'seq') return [];
  return nodes.items.flatMap((item) => {
    if (item.kind !== 'map') return [];
    const id = item.entries.find((e) => e.key === 'id')?.value;
    const body = item.entries.find((e) => e.key === 'body')?.value;
    const inner = body?.kind === 'map' ? rawNodeIds(body) : [];
    return id?.kind === 'scalar' && typeof id.value === 'string' ? [id.value, ...inner] : inner;
  });
}

function readDefaults(top: MapReader): Defaults {
  const reader = top.map('defaults');
  if (!reader) return { retry: DEFAULT_RETRY, timeoutMs: null, priority: 0 };
  const retry = readRetry(reader, DEFAULT_RETRY);
  const timeoutMs = reader.duration('timeout', { minMs: 1, maxMs: MAX_DURATION_MS }) ?? null;
  const priority = reader.integer('priority', { min: -1000, max: 1000 }) ?? 0;
  reader.done('defaults (expected retry, timeout, priority)');
  return { retry, timeoutMs, priority };
}

function readNodes(
  top: MapReader,
  defaults: Defaults,
  problems: DefinitionProblem[],
  prefix: string,
): NodeDef[] {
  const entry = top.entry('nodes');
  if (!entry) {
    top.problem(
      prefix
        ? 'a body needs a "nodes" list with at least one node'
        : 'a definition needs a "nodes" list with at least one node',
    );
    return [];
  }
  if (entry.value.kind !== 'seq') {
    top.problem(`must be a list of nodes, not ${describeLocated(entry.value)}`, entry.line, 'nodes');
    return [];
  }
  const nodes: NodeDef[] = [];
  entry.value.items.forEach((item, index) => {
    const node = readNode(item, index, defaults, problems, prefix);
    if (node) nodes.push(node);
  });
  return nodes;
}

function readNode(
  item: Located,
  index: number,
  defaults: Defaults,
  problems: DefinitionProblem[],
  prefix: string,
): NodeDef | undefined {
  const path = `${prefix}nodes[${index}]`;
  if (item.kind !== 'map') {
    problems.push({
      line: item.line,
      path,
      message: `${path}: a node must be a map with an id, not ${describeLocated(item)}`,
    });
    return undefined;
  }
  const idEntry = item.entries.find((e) => e.key === 'id');
  const rawId =
    idEntry?.value.kind === 'scalar' && typeof idEntry.value.value === 'string'
      ? idEntry.value.value
      : undefined;
  const r = new MapReader(item, path, problems, rawId);
  const id = r.string('id', {
    required: true,
    pattern: NODE_ID_PATTERN,
    patternHint:
      'is not a valid node id: use letters, digits and "_", starting with a letter (so expressions can say nodes.<id>)',
  });
  const kind = r.has('kind') ? r.oneOf('kind', NODE_KINDS) : 'task';
  const description = r.string('description');
  const join: JoinMode = r.oneOf('join', ['all', 'any'] as const) ?? 'all';
  if (id === undefined || kind === undefined) {
    r.done('a node');
    return undefined;
  }
  const common = { id, line: item.line, join, ...(description !== undefined ? { description } : {}) };
  switch (kind) {
    case 'task': {
      const fields = readTaskFields(r, defaults);
      r.done(
        'a task node (expected id, kind, description, join, task_type, input, retry, timeout, priority, semaphores, rate_limit, compensate)',
      );
      return fields ? { ...common, kind, ...fields } : undefined;
    }
    case 'noop':
      r.done('a noop node (expected id, kind, description, join)');
      return { ...common, kind };
    case 'human':
      return readHumanNode(r, common);
    case 'sub_workflow':
    case 'start_workflow':
    case 'event':
    case 'http':
      return readEffectNode(kind, r, common, defaults);
    default:
      return readControlFlowNode(r, kind, common, {
        nodes: (body, at) => readNodes(body, defaults, problems, at),
        edges: (body, at) => readEdges(body, problems, at),
        task: (reader) => readTaskFields(reader, defaults),
      });
  }
}

/** The fields of a task node (also used by a map's `task`); undefined when the task type is missing. */
function readTaskFields(
  r: MapReader,
  defaults: Defaults,
): Omit<TaskNode, keyof NodeCommon | 'kind'> | undefined {
  const taskType = r.string('task_type', {
    required: true,
    pattern: TASK_TYPE_PATTERN,
    patternHint: 'is not a valid task type: use letters, digits, ".", "_", ":", "/" and "-"',
  });
  const input = r.json('input');
  const retry = readRetry(r, defaults.retry);
  const timeoutMs = r.duration('timeout', { minMs: 1, maxMs: MAX_DURATION_MS }) ?? defaults.timeoutMs;
  const priority = r.integer('priority', { min: -1000, max: 1000 }) ?? defaults.priority;
  const gates = readTaskGates(r);
  const compensate = readCompensation(r, defaults);
  if (taskType === undefined) return undefined;
  return {
    taskType,
    input: input === undefined ? null : input,
    retry,
    timeoutMs,
    priority,
    ...gates,
    ...(compensate ? { compensate } : {}),
  };
}

function readEdges(top: MapReader, problems: DefinitionProblem[], prefix: string): EdgeDef[] {
  const entry = top.entry('edges');
  if (!entry || (entry.value.kind === 'scalar' && entry.value.value === null)) return [];
  if (entry.value.kind !== 'seq') {
    top.problem(
      `must be a list of edges like {from: a, to: b}, not ${describeLocated(entry.value)}`,
      entry.line,
      'edges',
    );
    return [];
  }
  const edges: EdgeDef[] = [];
  entry.value.items.forEach((item, index) => {
    const path = `${prefix}edges[${index}]`;
    if (item.kind !== 'map') {
      problems.push({
        line: item.line,
        path,
        message: `${path}: an edge must be a map like {from: a, to: b}, not ${describeLocated(item)}`,
      });
      return;
    }
    const r = new MapReader(item, path, problems);
    const from = r.string('from', { required: true });
    const toEntry = r.entry('to');
    const when = readEdgeWhen(r);
    r.done('an edge (expected from, to, case, default, on)');
    if (!toEntry) {
      r.problem('is required', item.line, 'to');
      return;
    }
    const targets: string[] = [];
    if (toEntry.value.kind === 'scalar' && typeof toEntry.value.value === 'string')
      targets.push(toEntry.value.value);
    else if (
      toEntry.value.kind === 'seq' &&
      toEntry.value.items.every((t) => t.kind === 'scalar' && typeof t.value === 'string')
    ) {
      for (const t of toEntry.value.items) if (t.kind === 'scalar') targets.push(String(t.value));
    } else {
      r.problem(
        `must be a node id or a list of node ids, not ${describeLocated(toEntry.value)}`,
        toEntry.line,
        'to',
      );
      return;
    }
    if (from === undefined) return;
    for (const to of targets) edges.push({ from, to, line: item.line, ...(when ? { when } : {}) });
  });
  return edges;
}
