import type { Draft } from './draft.js';
import { describeLocated, type LocatedEntry } from './located.js';
import type { EdgeDef } from './node-types.js';
import { readEdgeWhen } from './parse-control-flow.js';
import { MapReader } from './reader.js';

/** Reads an `edges` list (of the definition, or of a body with `prefix`); each problem goes to the draft. */
export function readEdges(top: MapReader, draft: Draft, prefix: string): EdgeDef[] {
  const entry = top.entry('edges');
  if (!entry || (entry.value.kind === 'scalar' && entry.value.value === null)) return [];
  if (entry.value.kind !== 'seq') {
    const what = `must be a list of edges like {from: a, to: b}, not ${describeLocated(entry.value)}`;
    top.problem(what, entry.line, 'edges');
    return [];
  }
  const edges: EdgeDef[] = [];
  entry.value.items.forEach((item, index) => {
    const path = `${prefix}edges[${index}]`;
    if (item.kind !== 'map') {
      draft.problems.push({
        line: item.line,
        path,
        message: `${path}: an edge must be a map like {from: a, to: b}, not ${describeLocated(item)}`,
      });
      return;
    }
    const r = new MapReader(item, path, draft.problems);
    const from = r.string('from', { required: true });
    const toEntry = r.entry('to');
    const labelled = ['case', 'default', 'on'].some((k) => r.has(k));
    const when = readEdgeWhen(r);
    r.done('an edge (expected from, to, case, default, on)');
    const targets = edgeTargets(r, toEntry, item.line);
    if (from === undefined || targets === undefined) return;
    for (const to of targets) {
      const edge: EdgeDef = { from, to, line: item.line, ...(when ? { when } : {}) };
      // A label that could not be read: the edge still joins its nodes, but its label is not checked.
      edges.push(labelled && !when ? draft.brokenEdge(edge) : edge);
    }
  });
  return edges;
}

/** An edge's `to`: one node id or a list of them; undefined (reported) when missing or not ids. */
function edgeTargets(r: MapReader, toEntry: LocatedEntry | undefined, line: number): string[] | undefined {
  if (!toEntry) {
    r.problem('is required', line, 'to');
    return undefined;
  }
  const v = toEntry.value;
  if (v.kind === 'scalar' && typeof v.value === 'string') return [v.value];
  if (v.kind === 'seq' && v.items.every((t) => t.kind === 'scalar' && typeof t.value === 'string'))
    return v.items.map((t) => (t.kind === 'scalar' ? String(t.value) : ''));
  r.problem(`must be a node id or a list of node ids, not ${describeLocated(v)}`, toEntry.line, 'to');
  return undefined;
}
