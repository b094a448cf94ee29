import { type Definition, WeftError } from '@weft/core';
import {
  type AttributeRow,
  type DefinitionRecord,
  type IdempotentRun,
  type LockedRun,
  type NewRun,
  NO_PROGRESS,
  type RunUpdateRow,
} from '@weft/engine';
import { byText, definitionRecord, lockedRun, type Op } from './convert.js';
import { enc, key, type RunRow } from './state.js';

/** Stores a definition version: the existing one when the hash matches, otherwise the next number. */
export function deployDefinition(
  op: Op,
  namespace: string,
  name: string,
  hash: string,
  source: string,
  definition: Definition,
): { record: DefinitionRecord; created: boolean } {
  const versions = op.s.definitions.pick(op.s.definitionsByName.keys(key(namespace, name)));
  const existing = versions.find((d) => d.hash === hash);
  if (existing) return { record: definitionRecord(existing), created: false };
  const row = {
    id: String(op.s.next('definition')),
    namespace,
    name,
    version: Math.max(0, ...versions.map((d) => d.version)) + 1,
    hash,
    source,
    definition: JSON.stringify(definition),
    createdAt: op.tx.now,
  };
  op.s.definitions.set(op.tx.journal, row.id, row);
  return { record: definitionRecord(row), created: true };
}

/** The latest version of each named definition, or null where none is deployed. */
export function latestDefinitionVersions(
  op: Op,
  names: readonly { namespace: string; name: string }[],
): { namespace: string; name: string; version: number | null }[] {
  return names.map(({ namespace, name }) => ({
    namespace,
    name,
    version: op.s.definitionVersions(namespace, name).latest?.version ?? null,
  }));
}

/** Running (or paused, or compensating) runs of a namespace: what its quota counts. */
export function activeRuns(op: Op, namespace: string): number {
  let n = 0;
  for (const r of op.s.runs.values())
    if (
      r.namespace === namespace &&
      (r.status === 'running' || r.status === 'paused' || r.status === 'compensating')
    )
      n++;
  return n;
}

/** The quota of running runs of a namespace, or null when it has none. */
export const quotaOf = (op: Op, namespace: string): number | null =>
  op.s.limits.get(key(namespace, 'quota', ''))?.max ?? null;

function newRunRow(op: Op, r: NewRun): RunRow {
  return {
    id: r.id,
    namespace: r.namespace,
    definitionId: r.definitionId,
    definitionName: r.definitionName,
    definitionVersion: r.definitionVersion,
    status: 'running',
    input: enc(r.input),
    output: null,
    error: null,
    vars: '{}',
    attributes: JSON.stringify(r.attributes ?? {}),
    sinksDone: 0,
    createdAt: op.tx.now,
    finishedAt: null,
    parent: r.parent ? { ...r.parent } : null,
    // A child stays in its parent's trace, as in PgStore.
    traceContext: r.traceContext ?? (r.parent ? (op.s.runs.get(r.parent.runId)?.traceContext ?? null) : null),
  };
}

function insertRun(op: Op, row: RunRow): LockedRun {
  if (op.s.runs.has(row.id))
    throw Object.assign(new Error(`a run with id ${row.id} exists already`), { code: '23505' });
  op.s.runs.set(op.tx.journal, row.id, row);
  op.locks.take(op.tx, `run:${row.id}`, 'wait');
  return lockedRun(op, row);
}

/**
 * Inserts runs, `running`, locked by this transaction. Left out: a run whose idempotency key this
 * transaction did not claim, and runs past their namespace's quota of running runs (in batch order).
 */
export function insertRuns(op: Op, runs: readonly NewRun[]): LockedRun[] {
  const keyed = runs.filter((r) => {
    if (r.idempotencyKey === undefined) return true;
    return op.s.idempotencyKeys.get(key(r.namespace, r.idempotencyKey))?.runId === r.id;
  });
  const room = new Map<string, number>();
  for (const r of keyed) {
    if (room.has(r.namespace)) continue;
    const max = quotaOf(op, r.namespace);
    room.set(r.namespace, max === null ? Number.POSITIVE_INFINITY : max - activeRuns(op, r.namespace));
  }
  const out: LockedRun[] = [];
  for (const r of keyed) {
    const free = room.get(r.namespace)!;
    if (free <= 0) continue;
    room.set(r.namespace, free - 1);
    out.push(insertRun(op, newRunRow(op, r)));
  }
  return out;
}

/**
 * Inserts runs started by nodes, deduplicated on their start keys: a start delivered twice finds its key
 * taken and inserts nothing. Returns the runs inserted now, locked.
 */
export function insertChildRuns(op: Op, runs: readonly NewRun[]): LockedRun[] {
  const out: LockedRun[] = [];
  for (const r of runs) {
    const startKey = r.startKey ?? r.id;
    if (op.s.startKeys.has(startKey)) continue;
    op.s.startKeys.set(op.tx.journal, startKey, r.id);
    if (op.s.runs.has(r.id)) continue;
    out.push(insertRun(op, newRunRow(op, r)));
  }
  return out;
}

/** Locks runs in id order; with `skip`, runs another transaction holds are left out. */
export function lockRuns(op: Op, ids: readonly string[], mode: 'wait' | 'skip'): LockedRun[] {
  const out: LockedRun[] = [];
  for (const id of [...new Set(ids)].sort(byText)) {
    const row = op.s.runs.get(id);
    if (!row) continue;
    if (!op.locks.take(op.tx, `run:${id}`, mode)) continue;
    out.push(lockedRun(op, row));
  }
  return out;
}

/** Applies status, output, error, variables and counters to runs the caller has locked. */
export function updateRuns(op: Op, rows: readonly RunUpdateRow[]): void {
  for (const u of rows) {
    const r = op.s.runs.get(u.runId);
    if (!r) continue;
    op.s.runs.set(op.tx.journal, r.id, {
      ...r,
      status: u.status ?? r.status,
      output: u.output !== undefined ? enc(u.output) : r.output,
      error: u.error !== undefined ? enc(u.error) : r.error,
      sinksDone: r.sinksDone + (u.sinksDelta ?? 0),
      vars: u.vars ? JSON.stringify({ ...JSON.parse(r.vars), ...u.vars }) : r.vars,
      finishedAt: u.finished ? op.tx.now : u.reopened ? null : r.finishedAt,
      ...(u.finished ? { progress: { ...(r.progress ?? NO_PROGRESS), running: 0 } } : {}),
    });
  }
}

/** Claims idempotency keys in (namespace, key) order; returns those claimed (free ones). */
export function claimIdempotencyKeys(
  op: Op,
  rows: readonly IdempotentRun[],
): { namespace: string; key: string }[] {
  const sorted = [...rows].sort((a, b) => byText(a.namespace, b.namespace) || byText(a.key, b.key));
  const out: { namespace: string; key: string }[] = [];
  for (const r of sorted) {
    const k = key(r.namespace, r.key);
    if (op.s.idempotencyKeys.has(k)) continue;
    op.s.idempotencyKeys.set(op.tx.journal, k, {
      namespace: r.namespace,
      key: r.key,
      runId: r.runId,
      definitionName: r.definitionName,
    });
    out.push({ namespace: r.namespace, key: r.key });
  }
  return out;
}

/** Gives back claimed keys. */
export function releaseIdempotencyKeys(op: Op, keys: readonly { namespace: string; key: string }[]): void {
  for (const k of keys) op.s.idempotencyKeys.delete(op.tx.journal, key(k.namespace, k.key));
}

/** The quota and running runs of each namespace that has a quota. */
export function quotaUsage(
  op: Op,
  namespaces: readonly string[],
): { namespace: string; max: number; used: number }[] {
  const out: { namespace: string; max: number; used: number }[] = [];
  for (const namespace of new Set(namespaces)) {
    const max = quotaOf(op, namespace);
    if (max !== null) out.push({ namespace, max, used: activeRuns(op, namespace) });
  }
  return out;
}

/** Checks a page cursor: an id this store gave out. */
export function checkCursor(cursor: string | undefined, pattern: RegExp): void {
  if (cursor !== undefined && !pattern.test(cursor))
    throw new WeftError('bad_cursor', `cursor ${JSON.stringify(cursor)} is not one this API gave out`);
}

/** Sets search attributes of runs the transaction has locked: each replaces the run's attribute of its name. */
export function setAttributes(op: Op, rows: readonly AttributeRow[]): void {
  for (const r of rows) {
    const row = op.s.runs.get(r.runId);
    if (!row) continue;
    const attributes = JSON.stringify({ ...(JSON.parse(row.attributes) as object), ...r.values });
    op.s.runs.set(op.tx.journal, r.runId, { ...row, attributes });
  }
}
