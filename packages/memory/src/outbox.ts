import type {
  DeadLetterFilter,
  OutboxOutcome,
  OutboxRetryPolicy,
  OutboxRow,
  OutboxWrite,
  Page,
  ReplaySelection,
} from '@weft/engine';
import { byText, type Op, outboxRow, plus } from './convert.js';
import { checkCursor } from './runs.js';
import { key } from './state.js';

/** Inserts one outbox row, due now. */
export function insertOutboxRow(op: Op, w: OutboxWrite): void {
  const id = op.s.next('outbox');
  op.s.outbox.set(op.tx.journal, id, {
    runId: w.runId,
    id,
    namespace: w.namespace,
    taskId: w.taskId,
    destination: w.destination,
    messageId: w.messageId,
    payload: JSON.stringify(w.payload),
    kind: w.payload.kind,
    status: 'pending',
    attempts: 0,
    nextAttemptAt: op.tx.now,
    lastError: null,
    createdAt: op.tx.now,
    deadAt: null,
  });
}

/**
 * Writes outbox rows. A row tied to a task is written only if that task row exists: an insert absorbed as
 * a duplicate takes its effects with it.
 */
export function insertOutbox(op: Op, rows: readonly OutboxWrite[]): void {
  for (const w of rows)
    if (w.taskId === null || op.s.tasks.has(key(w.runId, w.taskId))) insertOutboxRow(op, w);
}

/** Destinations with rows due now. */
export function outboxDestinations(op: Op): string[] {
  const out = new Set<string>();
  for (const o of op.s.outbox.values())
    if (o.status === 'pending' && o.nextAttemptAt <= op.tx.now) out.add(o.destination);
  return [...out].sort(byText);
}

/**
 * Claims due rows of one destination: each row is locked by the claiming transaction until it ends, and a
 * row another transaction holds is skipped, so two relays never deliver one row at once.
 */
export function claimOutbox(op: Op, destination: string, limit: number): OutboxRow[] {
  const due = [...op.s.outbox.values()].filter(
    (o) => o.status === 'pending' && o.destination === destination && o.nextAttemptAt <= op.tx.now,
  );
  due.sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime() || a.id - b.id);
  const out: OutboxRow[] = [];
  for (const o of due) {
    if (out.length >= limit) break;
    if (op.locks.take(op.tx, `outbox:${o.id}`, 'skip')) out.push(outboxRow(o));
  }
  return out;
}

/** Settles delivered, repeated and failed rows; failures back off and become dead letters past the limit. */
export function settleOutbox(op: Op, outcomes: readonly OutboxOutcome[], policy: OutboxRetryPolicy): void {
  const j = op.tx.journal;
  const now = op.tx.now;
  for (const o of outcomes) {
    const id = Number(o.id);
    const row = op.s.outbox.get(id);
    if (!row || row.runId !== o.runId || row.status !== 'pending') continue;
    const d = o.delivery;
    if (d.kind === 'delivered') op.s.outbox.delete(j, id);
    else if (d.kind === 'repeat')
      op.s.outbox.set(j, id, { ...row, nextAttemptAt: plus(now, d.afterMs), lastError: null });
    else {
      const dead = d.permanent === true || row.attempts + 1 >= policy.maxAttempts;
      const delay = Math.min(policy.baseDelayMs * 2 ** Math.min(row.attempts, 40), policy.maxDelayMs);
      op.s.outbox.set(j, id, {
        ...row,
        attempts: row.attempts + 1,
        lastError: d.error.slice(0, 4000),
        status: dead ? 'dead' : 'pending',
        deadAt: dead ? now : null,
        nextAttemptAt: plus(now, delay),
      });
    }
  }
}

/** Dead letters, newest first; the cursor is the last id of the page. */
export function listDeadLetters(op: Op, filter: DeadLetterFilter): Page<OutboxRow> {
  checkCursor(filter.cursor, /^[0-9]{1,18}$/);
  const before = filter.cursor === undefined ? Number.POSITIVE_INFINITY : Number(filter.cursor);
  const rows = [...op.s.outbox.values()]
    .filter(
      (o) =>
        o.status === 'dead' &&
        o.namespace === filter.namespace &&
        o.id < before &&
        (filter.destination === undefined || o.destination === filter.destination),
    )
    .sort((a, b) => b.id - a.id)
    .slice(0, filter.limit + 1);
  const items = rows.slice(0, filter.limit).map(outboxRow);
  return { items, next: rows.length > filter.limit ? items[items.length - 1]!.id : null };
}

/** Puts dead letters back in line for delivery, attempts reset (their last error kept); returns how many. */
export function replayDeadLetters(op: Op, selection: ReplaySelection): number {
  const ids = selection.ids ? new Set(selection.ids.map(Number)) : null;
  let n = 0;
  for (const o of [...op.s.outbox.values()]) {
    if (o.status !== 'dead' || o.namespace !== selection.namespace) continue;
    if (ids && !ids.has(o.id)) continue;
    if (selection.destination !== undefined && o.destination !== selection.destination) continue;
    op.s.outbox.set(op.tx.journal, o.id, {
      ...o,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: op.tx.now,
      deadAt: null,
    });
    n++;
  }
  return n;
}
