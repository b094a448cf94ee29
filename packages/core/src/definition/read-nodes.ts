import type { Defaults, Draft } from './draft.js';
import { describeLocated, type Located } from './located.js';
import type { JoinMode, NodeCommon, NodeDef, NodeKind, TaskNode } from './node-types.js';
import { readCompensation } from './parse-compensation.js';
import { CONTROL_FLOW_KINDS, readControlFlowNode } from './parse-control-flow.js';
import { readEffectNode } from './parse-effect-nodes.js';
import { readHumanNode } from './parse-human.js';
import { readTaskGates } from './parse-limits.js';
import { readRetry } from './parse-retry.js';
import { MAX_DURATION_MS, NODE_ID_PATTERN, TASK_TYPE_PATTERN } from './patterns.js';
import { readEdges } from './read-edges.js';
import { MapReader } from './reader.js';

/** Every node kind, as written in YAML. */
export const NODE_KINDS: readonly NodeKind[] = [
  'task',
  'noop',
  'human',
  ...CONTROL_FLOW_KINDS,
  'sub_workflow',
  'start_workflow',
  'event',
  'http',
];

/**
 * Reads a `nodes` list (of the definition, or of a body with `prefix`). A node that cannot be read as
 * written but has an id comes back as a stand-in, marked broken in the draft, so the checks around it
 * still run; a node without an id cannot be referred to and is left out (its problems are reported).
 */
export function readNodes(top: MapReader, draft: Draft, defaults: Defaults, prefix: string): NodeDef[] {
  const entry = top.entry('nodes');
  if (!entry) {
    const what = prefix ? 'a body' : 'a definition';
    top.problem(`${what} needs a "nodes" list with at least one node`);
    return [];
  }
  if (entry.value.kind !== 'seq') {
    top.problem(`must be a list of nodes, not ${describeLocated(entry.value)}`, entry.line, 'nodes');
    return [];
  }
  const nodes: NodeDef[] = [];
  entry.value.items.forEach((item, index) => {
    const node = readNode(item, `${prefix}nodes[${index}]`, draft, defaults);
    if (node) nodes.push(node);
  });
  return nodes;
}

function readNode(item: Located, path: string, draft: Draft, defaults: Defaults): NodeDef | undefined {
  if (item.kind !== 'map') {
    const message = `${path}: a node must be a map with an id, not ${describeLocated(item)}`;
    draft.problems.push({ line: item.line, path, message });
    return undefined;
  }
  const written = item.entries.find((e) => e.key === 'id')?.value;
  const rawId = written?.kind === 'scalar' && typeof written.value === 'string' ? written.value : undefined;
  const r = new MapReader(item, path, draft.problems, rawId);
  const id = r.string('id', {
    required: true,
    pattern: NODE_ID_PATTERN,
    patternHint:
      'is not a valid node id: use letters, digits and "_", starting with a letter (so expressions can say nodes.<id>)',
  });
  const kind = r.has('kind') ? r.oneOf('kind', NODE_KINDS) : 'task';
  const description = r.string('description');
  const join: JoinMode = r.oneOf('join', ['all', 'any'] as const) ?? 'all';
  const common = {
    id: rawId ?? '',
    line: item.line,
    join,
    ...(description !== undefined ? { description } : {}),
  };
  if (id === undefined || kind === undefined) {
    // A node is reported for its id (or kind) alone: its other fields are judged once it has a valid one.
    // Written with some id, it stays in the graph as a stand-in, so edges to it and cycles through it count.
    r.skipRest();
    return rawId === undefined ? undefined : draft.brokenNode({ ...common, kind: 'noop' });
  }
  return readNodeOfKind(kind, r, common, draft, defaults) ?? draft.brokenNode({ ...common, kind: 'noop' });
}

/** Reads the fields of a node of a known kind; undefined when it cannot be read as written. */
function readNodeOfKind(
  kind: NodeKind,
  r: MapReader,
  common: NodeCommon,
  draft: Draft,
  defaults: Defaults,
): NodeDef | undefined {
  switch (kind) {
    case 'task': {
      const fields = readTaskFields(r, defaults);
      r.done(
        'a task node (expected id, kind, description, join, task_type, input, retry, timeout, priority, semaphores, rate_limit, limit_key, compensate)',
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
        nodes: (body, at) => readNodes(body, draft, defaults, at),
        edges: (body, at) => readEdges(body, draft, at),
        task: (reader) => readTaskFields(reader, defaults),
        broken: (node) => draft.brokenNode(node),
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
  const limitKey = r.string('limit_key');
  if (limitKey !== undefined && !gates.semaphores && !gates.rateLimit)
    r.problem(
      'splits semaphores and a rate limit by key: give the node semaphores or a rate_limit too',
      r.lineOf('limit_key'),
      'limit_key',
    );
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
    ...(limitKey !== undefined ? { limitKey } : {}),
  };
}
