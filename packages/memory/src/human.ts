import type { Json } from '@weft/core';
import type { HumanTaskRecord, HumanTaskState, InboxFilter, NewHumanTaskRow } from '@weft/engine';
import { humanRecord, type Op } from './convert.js';
import { enc, type HumanRow, key } from './state.js';
import { putTask } from './tasks.js';

const taskOf = (op: Op, h: HumanRow) => op.s.tasks.get(key(h.runId, h.taskId));

/** Puts human tasks in the inbox (a task already there is left as it is). */
export function insertHumanTasks(op: Op, rows: readonly NewHumanTaskRow[]): void {
  for (const r of rows) {
    if (op.s.humanTasks.has(r.taskId)) continue;
    op.s.humanTasks.set(op.tx.journal, r.taskId, {
      runId: r.runId,
      taskId: r.taskId,
      namespace: r.namespace,
      definition: r.definition,
      nodeId: r.nodeId,
      iteration: r.iteration,
      attempt: r.attempt,
      title: r.title,
      description: r.description,
      assignees: [...r.assignees],
      form: enc(r.form),
      state: 'open',
      claimedBy: null,
      claimedAt: null,
      deadlineAt: r.deadlineAt,
      completedBy: null,
      completedAt: null,
      data: null,
      createdAt: op.tx.now,
    });
  }
}

/** Takes open human tasks out of the inbox (expired, cancelled). */
export function closeHumanTasks(
  op: Op,
  rows: readonly { runId: string; taskId: string; state: HumanTaskState }[],
): void {
  for (const r of rows) {
    const h = op.s.humanTasks.get(r.taskId);
    if (h && h.runId === r.runId && h.state === 'open')
      op.s.humanTasks.set(op.tx.journal, r.taskId, { ...h, state: r.state });
  }
}

/** The inbox of a namespace, oldest first. */
export function listHumanTasks(op: Op, f: InboxFilter): HumanTaskRecord[] {
  const state = f.state ?? 'open';
  const out: HumanTaskRecord[] = [];
  const rows = [...op.s.humanTasks.values()]
    .filter((h) => h.namespace === f.namespace)
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.taskId < b.taskId ? -1 : 1));
  for (const h of rows) {
    if (out.length >= f.limit) break;
    const record = humanRecord(h, taskOf(op, h));
    if (record.state !== state) continue;
    if (f.assignee !== undefined && h.assignees.length > 0 && !h.assignees.includes(f.assignee)) continue;
    if (f.claimedBy !== undefined && h.claimedBy !== f.claimedBy) continue;
    if (f.runId !== undefined && h.runId !== f.runId) continue;
    out.push(record);
  }
  return out;
}

/** One human task by its task id. */
export function getHumanTask(op: Op, taskId: string): HumanTaskRecord | null {
  const h = op.s.humanTasks.get(taskId);
  return h ? humanRecord(h, taskOf(op, h)) : null;
}

/**
 * Claims an open task for a person: only while it is open, unclaimed and its attempt runs. Transactions
 * run one at a time, so of two people claiming at once the second finds it claimed: one claim wins.
 */
export function claimHumanTask(
  op: Op,
  namespace: string,
  taskId: string,
  user: string,
): HumanTaskRecord | null {
  const h = op.s.humanTasks.get(taskId);
  if (!h || h.namespace !== namespace || h.state !== 'open' || h.claimedBy !== null) return null;
  if (taskOf(op, h)?.status !== 'running') return null;
  op.s.humanTasks.set(op.tx.journal, taskId, { ...h, claimedBy: user, claimedAt: op.tx.now });
  return getHumanTask(op, taskId);
}

/** Releases a claim held by `user`. */
export function releaseHumanTask(
  op: Op,
  namespace: string,
  taskId: string,
  user: string,
): HumanTaskRecord | null {
  const h = op.s.humanTasks.get(taskId);
  if (!h || h.namespace !== namespace || h.state !== 'open' || h.claimedBy !== user) return null;
  op.s.humanTasks.set(op.tx.journal, taskId, { ...h, claimedBy: null, claimedAt: null });
  return getHumanTask(op, taskId);
}

/** Answers an open task claimed by `user` (or by nobody): the attempt completes with the data. */
export function completeHumanTask(
  op: Op,
  namespace: string,
  taskId: string,
  user: string,
  data: Json,
): { nodeId: string; iteration: string; attempt: number } | null {
  const h = op.s.humanTasks.get(taskId);
  if (!h || h.namespace !== namespace || h.state !== 'open') return null;
  if (h.claimedBy !== null && h.claimedBy !== user) return null;
  const t = taskOf(op, h);
  if (!t || t.attempt !== h.attempt || t.status !== 'running') return null;
  const now = op.tx.now;
  putTask(op, { ...t, status: 'completed', output: enc(data) ?? 'null', finishedAt: now, worker: user });
  op.s.humanTasks.set(op.tx.journal, taskId, {
    ...h,
    state: 'completed',
    completedBy: user,
    completedAt: now,
    data: enc(data) ?? 'null',
    claimedBy: h.claimedBy ?? user,
    claimedAt: h.claimedAt ?? now,
  });
  return { nodeId: t.nodeId, iteration: t.iteration, attempt: t.attempt };
}

/** Marks inbox rows whose attempt ended without an answer as completed or cancelled. */
export function tidyHumanTasks(op: Op, limit: number): number {
  let n = 0;
  for (const h of [...op.s.humanTasks.values()]) {
    if (n >= limit) break;
    const t = taskOf(op, h);
    if (h.state !== 'open' || !t || t.status === 'running') continue;
    op.s.humanTasks.set(op.tx.journal, h.taskId, {
      ...h,
      state: t.status === 'completed' ? 'completed' : 'cancelled',
    });
    n++;
  }
  return n;
}
