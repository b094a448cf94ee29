import { WeftError } from '@weft/core';
import {
  type OutboxBacklog,
  type Page,
  type RunFilter,
  type RunRecord,
  runIdRange,
  type WorkerSighting,
} from '@weft/engine';
import { byText, type Op, runRecord } from './convert.js';
import { checkCursor } from './runs.js';
import { key, type RunRow } from './state.js';

/** Whether a run matches a filter's fields (not its cursor). */
function matches(op: Op, r: RunRow, f: Omit<RunFilter, 'cursor' | 'limit'>): boolean {
  if (r.namespace !== f.namespace) return false;
  if (f.status !== undefined && r.status !== f.status) return false;
  if (f.definition !== undefined && r.definitionName !== f.definition) return false;
  if (f.version !== undefined && r.definitionVersion !== f.version) return false;
  if (f.startedBefore !== undefined && !(r.createdAt < f.startedBefore)) return false;
  if (f.startedAfter !== undefined && !(r.createdAt >= f.startedAfter)) return false;
  if (f.runId !== undefined) {
    const range = runIdRange(f.runId);
    if (!range || r.id < range.from || r.id > range.to) return false;
  }
  if (f.attribute !== undefined) {
    const value = (JSON.parse(r.attributes) as Record<string, unknown>)[f.attribute.key];
    if (value === undefined || String(value) !== f.attribute.value) return false;
  }
  if (f.idempotencyKey !== undefined) {
    if (op.s.idempotencyKeys.get(key(f.namespace, f.idempotencyKey))?.runId !== r.id) return false;
  }
  return true;
}

/** Newest first: by start time then id with a time filter, by id otherwise (as the Postgres store). */
function order(byTime: boolean) {
  return (a: RunRow, b: RunRow) =>
    (byTime ? b.createdAt.getTime() - a.createdAt.getTime() : 0) || byText(b.id, a.id);
}

/** A page of runs, newest first; the cursor is the last run id of the page. */
export function listRuns(op: Op, filter: RunFilter): Page<RunRecord> {
  checkCursor(filter.cursor, /^[0-9a-f-]{36}$/i);
  const byTime = filter.startedBefore !== undefined || filter.startedAfter !== undefined;
  const compare = order(byTime);
  const after = filter.cursor === undefined ? undefined : op.s.runs.get(filter.cursor.toLowerCase());
  if (filter.cursor !== undefined && byTime && !after)
    throw new WeftError('bad_cursor', `cursor ${JSON.stringify(filter.cursor)} is not one this API gave out`);
  const rows = [...op.s.runs.values()]
    .filter((r) => matches(op, r, filter))
    .filter((r) =>
      filter.cursor === undefined ? true : after ? compare(after, r) < 0 : r.id < filter.cursor.toLowerCase(),
    )
    .sort(compare)
    .slice(0, filter.limit + 1);
  const wanted = new Set(filter.include ?? []);
  const items = rows
    .slice(0, filter.limit)
    .map(runRecord)
    .map((r) => ({
      ...r,
      input: wanted.has('input') ? r.input : null,
      output: wanted.has('output') ? r.output : null,
    }));
  return { items, next: rows.length > filter.limit ? items[items.length - 1]!.id : null };
}

/** How many runs match, counted up to `cap`. */
export function countMatchingRuns(op: Op, filter: Omit<RunFilter, 'cursor' | 'limit'>, cap: number): number {
  let n = 0;
  for (const r of op.s.runs.values()) {
    if (n >= cap) break;
    if (matches(op, r, filter)) n++;
  }
  return n;
}

/** Namespaces with a definition deployed. */
export function listNamespaces(op: Op): string[] {
  return [...new Set([...op.s.definitions.values()].map((d) => d.namespace))].sort(byText);
}

/** The outbox of a namespace per destination. */
export function outboxBacklog(op: Op, namespace: string): OutboxBacklog[] {
  const out = new Map<string, OutboxBacklog & { lastErrorId: number }>();
  for (const o of op.s.outbox.values()) {
    if (o.namespace !== namespace) continue;
    const b = out.get(o.destination) ?? {
      destination: o.destination,
      pending: 0,
      retrying: 0,
      dead: 0,
      oldestAt: null,
      nextAttemptAt: null,
      lastError: null,
      lastErrorId: -1,
    };
    const pending = o.status === 'pending';
    out.set(o.destination, {
      ...b,
      pending: b.pending + (pending && o.attempts === 0 ? 1 : 0),
      retrying: b.retrying + (pending && o.attempts > 0 ? 1 : 0),
      dead: b.dead + (pending ? 0 : 1),
      oldestAt: pending && (!b.oldestAt || o.createdAt < b.oldestAt) ? o.createdAt : b.oldestAt,
      nextAttemptAt:
        pending && (!b.nextAttemptAt || o.nextAttemptAt < b.nextAttemptAt)
          ? o.nextAttemptAt
          : b.nextAttemptAt,
      ...(o.lastError !== null && o.id > b.lastErrorId ? { lastError: o.lastError, lastErrorId: o.id } : {}),
    });
  }
  return [...out.values()]
    .sort((a, b) => byText(a.destination, b.destination))
    .map(({ lastErrorId: _, ...b }) => b);
}

/** Workers seen, by `key(namespace, name)`; written outside transactions (they are hints for people). */
export function recordWorkers(
  workers: Map<string, WorkerSighting>,
  sightings: readonly WorkerSighting[],
): void {
  for (const w of sightings) {
    const k = key(w.namespace, w.name);
    const old = workers.get(k);
    workers.set(k, {
      namespace: w.namespace,
      name: w.name,
      taskTypes:
        w.taskTypes.length > 0 && (!old || w.lastSeenAt >= old.lastSeenAt)
          ? [...w.taskTypes]
          : (old?.taskTypes ?? []),
      firstSeenAt: old?.firstSeenAt ?? w.lastSeenAt,
      lastSeenAt: old && old.lastSeenAt > w.lastSeenAt ? old.lastSeenAt : w.lastSeenAt,
    });
  }
  const dayAgo = Date.now() - 86_400_000;
  for (const [k, w] of workers) if (w.lastSeenAt.getTime() < dayAgo) workers.delete(k);
}

/** Workers of a namespace seen since a time, most recent first. */
export function listWorkers(
  workers: Map<string, WorkerSighting>,
  namespace: string,
  since: Date,
): WorkerSighting[] {
  return [...workers.values()]
    .filter((w) => w.namespace === namespace && w.lastSeenAt >= since)
    .sort((a, b) => b.lastSeenAt.getTime() - a.lastSeenAt.getTime() || byText(a.name, b.name));
}
