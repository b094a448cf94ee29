import type { Mailbox, RunEvent } from '@weft/core';
import {
  type HistoryRow,
  type InboxItem,
  type MailboxRow,
  type MailboxStateKey,
  NO_PROGRESS,
  progressDeltas,
  type TimerRow,
} from '@weft/engine';
import { byText, type Op, plus } from './convert.js';
import { enc, key } from './state.js';

/**
 * Asks for a decision on a run: one row per run (the dedupe). An existing row keeps the earlier due
 * time, unless it is backing off after a failed decision (`keepBackoff`).
 */
export function requestDecision(
  op: Op,
  runId: string,
  reason: string,
  delayMs: number,
  keepBackoff = true,
): void {
  const now = op.tx.now;
  const notBefore = plus(now, delayMs);
  const d = op.s.decideQueue.get(runId);
  op.s.decideQueue.set(
    op.tx.journal,
    runId,
    d
      ? {
          ...d,
          reason,
          requestedAt: now,
          notBefore: keepBackoff && d.failures > 0 ? d.notBefore : earlier(notBefore, d.notBefore),
        }
      : { runId, reason, requestedAt: now, notBefore, failures: 0, lastError: null },
  );
}

const earlier = (a: Date, b: Date): Date => (a < b ? a : b);

/** Asks for a decision on each existing run. */
export function requestDecisions(op: Op, runIds: readonly string[], reason: string, delayMs = 0): void {
  for (const runId of [...new Set(runIds)].sort(byText))
    if (op.s.runs.has(runId)) requestDecision(op, runId, reason, delayMs);
}

/** Claims pending decisions: deletes their rows; returns the runs that had one. */
export function claimDecisions(op: Op, runIds: readonly string[]): string[] {
  return [...new Set(runIds)].filter((id) => op.s.decideQueue.delete(op.tx.journal, id));
}

/** Puts a failed decision back with a backoff and its error. */
export function deferDecision(op: Op, runId: string, error: string, delayMs: number): void {
  const d = op.s.decideQueue.get(runId);
  const notBefore = plus(op.tx.now, delayMs);
  op.s.decideQueue.set(
    op.tx.journal,
    runId,
    d
      ? { ...d, notBefore, failures: d.failures + 1, lastError: error }
      : {
          runId,
          reason: 'retry after error',
          requestedAt: op.tx.now,
          notBefore,
          failures: 1,
          lastError: error,
        },
  );
}

/** Runs with a due decision, oldest first. */
export function dueDecisions(op: Op, limit: number): string[] {
  const due = [...op.s.decideQueue.values()].filter((d) => d.notBefore <= op.tx.now);
  due.sort((a, b) => a.notBefore.getTime() - b.notBefore.getTime());
  return due.slice(0, limit).map((d) => d.runId);
}

/** Pending events of the given runs, in arrival order per run. */
export function readInbox(op: Op, runIds: readonly string[]): InboxItem[] {
  const out: InboxItem[] = [];
  for (const runId of [...new Set(runIds)].sort(byText)) {
    const rows = op.s.inbox.pick(op.s.inboxByRun.keys(runId)).sort((a, b) => a.id - b.id);
    for (const r of rows) out.push({ id: String(r.id), runId, event: JSON.parse(r.event) as RunEvent });
  }
  return out;
}

/** Appends events to run inboxes. */
export function appendInbox(op: Op, items: readonly { runId: string; event: RunEvent }[]): void {
  for (const item of items) {
    const id = op.s.next('inbox');
    op.s.inbox.set(op.tx.journal, key(item.runId, id), {
      runId: item.runId,
      id,
      event: JSON.stringify(item.event),
    });
  }
}

/** Deletes consumed inbox events. */
export function deleteInbox(op: Op, items: readonly { runId: string; id: string }[]): void {
  for (const i of items) op.s.inbox.delete(op.tx.journal, key(i.runId, Number(i.id)));
}

/** Arms timers. */
export function insertTimers(op: Op, rows: readonly TimerRow[]): void {
  for (const t of rows)
    op.s.timers.set(op.tx.journal, key(t.runId, t.id), {
      runId: t.runId,
      id: t.id,
      dueAt: t.dueAt,
      purpose: JSON.parse(JSON.stringify(t.purpose)),
    });
}

/** Due timers, oldest first. */
export function dueTimers(op: Op, limit: number): { id: string; runId: string }[] {
  const due = [...op.s.timers.values()].filter((t) => t.dueAt <= op.tx.now);
  due.sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime());
  return due.slice(0, limit).map((t) => ({ id: t.id, runId: t.runId }));
}

/**
 * Deletes due timers and returns their events. A timer is deleted by the one transaction that takes it,
 * so each timer fires once; one held by another transaction is skipped.
 */
export function takeTimers(
  op: Op,
  ids: readonly { id: string; runId: string }[],
): { runId: string; event: RunEvent }[] {
  const out: { runId: string; event: RunEvent }[] = [];
  for (const i of ids) {
    const k = key(i.runId, i.id);
    const t = op.s.timers.get(k);
    if (!t || t.dueAt > op.tx.now || !op.locks.take(op.tx, `timer:${k}`, 'skip')) continue;
    op.s.timers.delete(op.tx.journal, k);
    out.push({
      runId: t.runId,
      event: { kind: 'timer_fired', purpose: JSON.parse(JSON.stringify(t.purpose)) },
    });
  }
  return out;
}

/** Appends history events, stamped with the transaction's time, and counts the progress they make. */
export function appendHistory(op: Op, rows: readonly HistoryRow[]): void {
  for (const d of progressDeltas(rows)) {
    const r = op.s.runs.get(d.runId);
    if (!r) continue;
    const p = r.progress ?? NO_PROGRESS;
    const progress = {
      known: p.known + d.known,
      completed: p.completed + d.completed,
      failed: p.failed + d.failed,
      running: r.finishedAt === null ? Math.max(0, p.running + d.running) : 0,
    };
    op.s.runs.set(op.tx.journal, r.id, { ...r, progress });
  }
  for (const r of rows)
    op.s.appendHistory(op.tx.journal, r.runId, {
      seq: r.seq,
      type: r.type,
      nodeId: r.nodeId,
      iteration: r.iteration,
      attempt: r.attempt,
      data: enc(r.data),
      at: op.tx.now,
    });
}

/** Signal mailboxes of locked runs; an empty mailbox has no row. */
export function loadMailboxes(
  op: Op,
  keys: readonly MailboxStateKey[],
): { runId: string; mailbox: Mailbox }[] {
  const out: { runId: string; mailbox: Mailbox }[] = [];
  for (const k of keys) {
    const m = op.s.mailboxes.get(key(k.runId, k.name, k.correlation));
    if (!m) continue;
    out.push({
      runId: m.runId,
      mailbox: {
        name: m.name,
        correlation: m.correlation,
        buffered: JSON.parse(m.buffered),
        waiters: JSON.parse(m.waiters),
      },
    });
  }
  return out;
}

/** Stores mailboxes as a pass left them: those with something in them kept, emptied ones deleted. */
export function writeMailboxes(op: Op, rows: readonly MailboxRow[]): void {
  for (const { runId, mailbox: m } of rows) {
    const k = key(runId, m.name, m.correlation);
    if (m.buffered.length === 0 && m.waiters.length === 0) op.s.mailboxes.delete(op.tx.journal, k);
    else
      op.s.mailboxes.set(op.tx.journal, k, {
        runId,
        name: m.name,
        correlation: m.correlation,
        buffered: JSON.stringify(m.buffered),
        waiters: JSON.stringify(m.waiters),
      });
  }
}
