import { isJsonObject, type JsonObject } from '../json.js';
import { describeLocated } from './located.js';
import type { EdgeDef, HumanDeadline, HumanNode, NodeCommon } from './node-types.js';
import { MAX_DURATION_MS } from './patterns.js';
import type { MapReader } from './reader.js';

/**
 * Reads a `human` node:
 *
 *     - id: approve
 *       kind: human
 *       title: Approve the refund
 *       input: { amount: input.amount }             # what the person sees (a mapping)
 *       form: { type: object, required: [ok] }      # JSON Schema for the answer
 *       assignees: [finance]
 *       deadline: { after: 2d, to: escalate }       # optional deadline edge
 */
export function readHumanNode(r: MapReader, common: NodeCommon): HumanNode | undefined {
  const title = r.string('title', { required: true });
  const input = r.json('input');
  const form = r.json('form');
  if (form !== undefined && form !== null && !isJsonObject(form))
    r.problem('must be a JSON Schema object', r.lineOf('form'), 'form');
  const assignees: string[] = [];
  const assigneesEntry = r.entry('assignees');
  if (assigneesEntry) {
    const v = assigneesEntry.value;
    if (v.kind === 'seq' && v.items.every((i) => i.kind === 'scalar' && typeof i.value === 'string'))
      for (const i of v.items)
        if (i.kind === 'scalar') assignees.push(String(i.value));
        else
          r.problem(`must be a list of names, not ${describeLocated(v)}`, assigneesEntry.line, 'assignees');
  }
  const deadline = readDeadline(r);
  r.done('a human node (expected id, kind, description, join, title, input, form, assignees, deadline)');
  if (title === undefined) return undefined;
  return {
    ...common,
    kind: 'human',
    title,
    input: input === undefined ? null : input,
    form: isJsonObject(form) ? (form as JsonObject) : null,
    assignees,
    deadline,
  };
}

function readDeadline(r: MapReader): HumanDeadline | null {
  if (!r.has('deadline')) return null;
  const entry = r.entry('deadline');
  if (entry?.value.kind === 'scalar') {
    // A bare duration: the run fails when it passes.
    const afterMs = r.duration('deadline', { minMs: 1, maxMs: MAX_DURATION_MS });
    return afterMs === undefined ? null : { afterMs, to: [] };
  }
  const d = r.map('deadline');
  if (!d) return null;
  const afterMs = d.duration('after', { minMs: 1, maxMs: MAX_DURATION_MS });
  if (afterMs === undefined && !d.has('after')) d.problem('is required', d.source.line, 'after');
  const to: string[] = [];
  const toEntry = d.entry('to');
  if (toEntry) {
    const v = toEntry.value;
    if (v.kind === 'scalar' && typeof v.value === 'string') to.push(v.value);
    else if (v.kind === 'seq' && v.items.every((i) => i.kind === 'scalar' && typeof i.value === 'string'))
      for (const i of v.items)
        if (i.kind === 'scalar') to.push(String(i.value));
        else
          d.problem(`must be a node id or a list of node ids, not ${describeLocated(v)}`, toEntry.line, 'to');
  }
  d.done('a deadline (expected after, to)');
  return afterMs === undefined ? null : { afterMs, to };
}

/** The edges a human node's deadline adds to the graph: from the node to each deadline target. */
export function deadlineEdges(nodes: readonly { kind: string; id: string; line: number }[]): EdgeDef[] {
  const out: EdgeDef[] = [];
  for (const node of nodes) {
    if (node.kind !== 'human') continue;
    for (const to of (node as HumanNode).deadline?.to ?? []) out.push({ from: node.id, to, line: node.line });
  }
  return out;
}
