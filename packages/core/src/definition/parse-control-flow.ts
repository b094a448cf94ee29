import type { Json } from '../json.js';
import { describeLocated } from './located.js';
import type {
  Body,
  ControlFlowNode,
  EdgeDef,
  EdgeWhen,
  LoopNode,
  MapNode,
  NodeCommon,
  NodeDef,
  NodeOfKind,
  SwitchNode,
  TaskNode,
  TerminateNode,
  TransformNode,
  WaitForEventNode,
  WaitNode,
} from './node-types.js';
import { MAX_DURATION_MS, SIGNAL_NAME_PATTERN } from './patterns.js';
import type { MapReader } from './reader.js';

/** The control-flow node kinds (branches, waits, loops, fan-out, transforms, ends), as written in YAML. */
export const CONTROL_FLOW_KINDS = [
  'switch',
  'wait',
  'wait_for_event',
  'loop',
  'map',
  'transform',
  'terminate',
] as const satisfies readonly ControlFlowNode['kind'][];
/** Most passes a loop may allow. */
export const MAX_LOOP_ITERATIONS = 10_000;

/** How the control-flow reader reaches back into the main parser (for bodies and map tasks). */
export interface BodyReaders {
  nodes(reader: MapReader, prefix: string): NodeDef[];
  edges(reader: MapReader, prefix: string): EdgeDef[];
  task(reader: MapReader): Omit<TaskNode, keyof NodeCommon | 'kind'> | undefined;
  /** Keeps a loop or map whose own fields are broken as a stand-in, with the body that could be read. */
  broken<N extends NodeDef>(node: N): N;
}

type Reader<K extends ControlFlowNode['kind']> = (
  r: MapReader,
  common: NodeCommon,
  parts: BodyReaders,
) => NodeOfKind<K> | undefined;

const READERS: { readonly [K in ControlFlowNode['kind']]: Reader<K> } = {
  switch: readSwitch,
  wait: readWait,
  wait_for_event: readWaitForEvent,
  loop: readLoop,
  map: readMap,
  transform: readTransform,
  terminate: readTerminate,
};

/** Reads the fields of a control-flow node; reports problems on the reader; undefined when unusable. */
export function readControlFlowNode(
  r: MapReader,
  kind: ControlFlowNode['kind'],
  common: NodeCommon,
  parts: BodyReaders,
): ControlFlowNode | undefined {
  return (READERS[kind] as Reader<typeof kind>)(r, common, parts);
}

function readSwitch(r: MapReader, common: NodeCommon): SwitchNode | undefined {
  const expression = r.string('expression', { required: true });
  r.done('a switch node (expected id, kind, description, join, expression)');
  return expression === undefined ? undefined : { ...common, kind: 'switch', expression };
}

function readWait(r: MapReader, common: NodeCommon): WaitNode | undefined {
  const durationMs = r.duration('duration', { minMs: 0, maxMs: MAX_DURATION_MS });
  const until = r.string('until');
  r.done('a wait node (expected id, kind, description, join, duration, until)');
  if ((durationMs === undefined) === (until === undefined)) {
    if (!r.has('duration') && !r.has('until'))
      r.problem('a wait node needs either duration (like 2h) or until (an expression giving a time)');
    else if (r.has('duration') && r.has('until'))
      r.problem('give either duration or until, not both', r.lineOf('until'));
    return undefined;
  }
  return { ...common, kind: 'wait', durationMs: durationMs ?? null, until: until ?? null };
}

function readWaitForEvent(r: MapReader, common: NodeCommon): WaitForEventNode | undefined {
  const event = r.string('event', {
    required: true,
    pattern: SIGNAL_NAME_PATTERN,
    patternHint: 'is not a valid signal name: use letters, digits, ".", "_", ":", "/" and "-"',
  });
  const correlation = r.string('correlation');
  const timeoutMs = r.duration('timeout', { minMs: 1, maxMs: MAX_DURATION_MS });
  r.done('a wait_for_event node (expected id, kind, description, join, event, correlation, timeout)');
  if (event === undefined) return undefined;
  return {
    ...common,
    kind: 'wait_for_event',
    event,
    correlation: correlation ?? null,
    timeoutMs: timeoutMs ?? null,
  };
}

function readLoop(r: MapReader, common: NodeCommon, parts: BodyReaders): LoopNode | undefined {
  const condition = r.string('while', { required: true });
  const maxIterations = r.integer('max_iterations', { min: 1, max: MAX_LOOP_ITERATIONS });
  if (!r.has('max_iterations')) {
    const message = `is required (at most ${MAX_LOOP_ITERATIONS}): a loop needs a limit`;
    r.problem(message, r.source.line, 'max_iterations');
  }
  const body = readBody(r, parts);
  r.done('a loop node (expected id, kind, description, join, while, max_iterations, body)');
  if (!body) return undefined;
  const node: LoopNode = {
    ...common,
    kind: 'loop',
    while: condition ?? 'false',
    maxIterations: maxIterations ?? 1,
    body,
  };
  return condition === undefined || maxIterations === undefined ? parts.broken(node) : node;
}

function readMap(r: MapReader, common: NodeCommon, parts: BodyReaders): MapNode | undefined {
  const items = r.string('items', { required: true });
  const concurrency = r.integer('concurrency', { min: 1, max: 100_000 });
  let body: Body | undefined;
  if (r.has('body') && r.has('task')) {
    r.problem('give either body (a sub-graph) or task (one task per item), not both', r.lineOf('task'));
    r.entry('body');
    r.entry('task');
  } else if (r.has('task')) {
    body = readMapTask(r, common.id, parts);
  } else if (r.has('body')) {
    body = readBody(r, parts);
  } else {
    r.problem('a map node needs a body (a sub-graph run per item) or a task (one task per item)');
  }
  r.done('a map node (expected id, kind, description, join, items, concurrency, body, task)');
  if (!body) return undefined;
  const node: MapNode = {
    ...common,
    kind: 'map',
    items: items ?? '[]',
    concurrency: concurrency ?? null,
    body,
  };
  return items === undefined ? parts.broken(node) : node;
}

function readTransform(r: MapReader, common: NodeCommon): TransformNode | undefined {
  if (!r.has('value')) r.problem('is required: the mapping that computes the output', r.source.line, 'value');
  const value = r.json('value');
  const vars = r.json('vars');
  if (vars !== undefined && (vars === null || typeof vars !== 'object' || Array.isArray(vars)))
    r.problem('must be a map of variable names to expressions', r.lineOf('vars'), 'vars');
  const attributes = r.json('attributes');
  if (
    attributes !== undefined &&
    (attributes === null || typeof attributes !== 'object' || Array.isArray(attributes))
  )
    r.problem('must be a map of attribute names to expressions', r.lineOf('attributes'), 'attributes');
  r.done('a transform node (expected id, kind, description, join, value, vars, attributes)');
  if (value === undefined) return undefined;
  return { ...common, kind: 'transform', value, vars: vars ?? null, attributes: attributes ?? null };
}

function readTerminate(r: MapReader, common: NodeCommon): TerminateNode | undefined {
  const status = r.oneOf('status', ['completed', 'failed'] as const);
  if (!r.has('status')) r.problem('is required: completed or failed', r.source.line, 'status');
  const output = r.json('output');
  const reason = r.string('reason');
  r.done('a terminate node (expected id, kind, description, join, status, output, reason)');
  if (status === 'completed' && reason !== undefined)
    r.problem('reason is for status failed; a completed run takes an output', r.lineOf('reason'));
  if (status === 'failed' && output !== undefined)
    r.problem('output is for status completed; a failed run takes a reason', r.lineOf('output'));
  if (status === undefined) return undefined;
  return { ...common, kind: 'terminate', status, output: output ?? null, reason: reason ?? null };
}

/** Reads a `body: { nodes, edges, output }` sub-graph. */
function readBody(r: MapReader, parts: BodyReaders): Body | undefined {
  if (!r.has('body')) {
    r.problem('is required: the sub-graph to run, with nodes and edges', r.source.line, 'body');
    return undefined;
  }
  const reader = r.map('body');
  if (!reader) return undefined;
  const prefix = `${reader.path}.`;
  const nodes = parts.nodes(reader, prefix);
  const edges = parts.edges(reader, prefix);
  const output = reader.json('output');
  reader.done('a body (expected nodes, edges, output)');
  return { nodes, edges, output: output ?? null };
}

/** A map's `task:` is a body of one task node, `<map id>.task`, that gets the item as its input by default. */
function readMapTask(r: MapReader, mapId: string, parts: BodyReaders): Body | undefined {
  const reader = r.map('task');
  if (!reader) return undefined;
  const fields = parts.task(reader);
  reader.done('a map task (expected task_type, input, retry, timeout, priority, compensate)');
  if (!fields) return undefined;
  const node: TaskNode = {
    id: `${mapId}.task`,
    line: reader.source.line,
    join: 'all',
    kind: 'task',
    ...fields,
  };
  return { nodes: [node], edges: [], output: null };
}

/** Reads an edge's `case`, `default` or `on` label. */
export function readEdgeWhen(r: MapReader): EdgeWhen | undefined {
  const given = ['case', 'default', 'on'].filter((k) => r.has(k));
  if (given.length > 1) {
    r.problem(`an edge takes one of case, default and on, not ${given.join(' and ')}`, r.lineOf(given[1]!));
    for (const k of given) r.entry(k);
    return undefined;
  }
  if (r.has('case')) {
    const e = r.entry('case')!;
    const raw = e.value;
    const items = raw.kind === 'seq' ? raw.items : [raw];
    const values: Json[] = [];
    for (const item of items) {
      if (item.kind !== 'scalar' || item.value === null) {
        r.problem(
          `must be a value (text, a number or true/false) or a list of them, not ${describeLocated(item)}`,
          e.line,
          'case',
        );
        return undefined;
      }
      values.push(item.value);
    }
    if (values.length === 0) {
      r.problem('must name at least one value', e.line, 'case');
      return undefined;
    }
    return { kind: 'case', values };
  }
  if (r.has('default')) {
    const e = r.entry('default')!;
    if (e.value.kind !== 'scalar' || e.value.value !== true) {
      r.problem(
        `must be true (the edge taken when no case matches), not ${describeLocated(e.value)}`,
        e.line,
        'default',
      );
      return undefined;
    }
    return { kind: 'default' };
  }
  if (r.has('on')) {
    const on = r.oneOf('on', ['timeout'] as const);
    return on === undefined ? undefined : { kind: 'timeout' };
  }
  return undefined;
}
