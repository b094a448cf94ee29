import { randomUUID } from 'node:crypto';
import {
  ANY_NAMESPACE,
  type LeasedTask,
  type LeaseOutcome,
  type LeaseRequest,
  type QueueRow,
  TASKS_DESTINATION,
} from '@weft/engine';
import { leasedTask, type Op, plus } from './convert.js';
import { leaseGated } from './lease-gated.js';
import { key, type QueueEntry, type TaskRow } from './state.js';
import { leaseEnd, putTask } from './tasks.js';

/** Puts tasks on the queue, available after their delay. */
export function enqueueTasks(op: Op, rows: readonly QueueRow[]): void {
  for (const r of rows) {
    const id = op.s.next('queue');
    op.s.queue.set(op.tx.journal, id, {
      id,
      taskId: r.taskId,
      runId: r.runId,
      namespace: r.namespace,
      taskType: r.taskType,
      priority: r.priority,
      availableAt: plus(op.tx.now, r.delayMs),
      gates: r.gates ? { ...r.gates } : null,
    });
  }
}

/** Queue rows of the request's namespace (every namespace for ANY_NAMESPACE) and task types. */
export function queueRows(op: Op, namespace: string, taskTypes: readonly string[]): QueueEntry[] {
  if (namespace === ANY_NAMESPACE) {
    const types = new Set(taskTypes);
    return [...op.s.queue.values()].filter((q) => types.has(q.taskType));
  }
  return taskTypes.flatMap((t) => op.s.queue.pick(op.s.queueByType.keys(key(namespace, t))));
}

/** Best first: highest priority, then oldest. */
export const byPriority = (a: QueueEntry, b: QueueEntry): number => b.priority - a.priority || a.id - b.id;

/** Task types with a concurrency cap, as `namespace:type`. */
export function cappedTypes(op: Op, namespace: string, taskTypes: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const t of new Set(taskTypes)) {
    if (namespace !== ANY_NAMESPACE) {
      if (op.s.limits.has(key(namespace, 'concurrency', t))) out.add(`${namespace}:${t}`);
      continue;
    }
    for (const l of op.s.limits.values())
      if (l.kind === 'concurrency' && l.name === t) out.add(`${l.namespace}:${t}`);
  }
  return out;
}

/**
 * Marks a queued task running for a worker with a fresh random lease token: the claim. It happens only
 * while the task is still queued (and its run not paused), so of any number of claimers exactly one
 * wins; the losers get nothing. Returns the leased task, or null when the claim was lost.
 */
export function claimTask(op: Op, runId: string, taskId: string, request: LeaseRequest): LeasedTask | null {
  const t = op.s.tasks.get(key(runId, taskId));
  if (t?.status !== 'queued') return null;
  const run = op.s.runs.get(runId);
  if (!run || run.status === 'paused') return null;
  const now = op.tx.now;
  const row: TaskRow = {
    ...t,
    status: 'running',
    worker: request.worker,
    leaseToken: randomUUID(),
    startedAt: now,
    deadlineAt: t.timeoutMs === null ? null : plus(now, t.timeoutMs),
    leaseExpiresAt: leaseEnd(now, request.leaseMs, t.timeoutMs),
  };
  putTask(op, row);
  return leasedTask(row, run.definitionName);
}

/**
 * One round of the fast path: rows under no limit, best first. Takes nothing (and says `gated`) when rows
 * under a limit wait for these types: those go through the gated path, which counts each limit.
 */
function leaseFast(op: Op, request: LeaseRequest) {
  const now = op.tx.now;
  const rows = queueRows(op, request.namespace, request.taskTypes);
  const capped = cappedTypes(op, request.namespace, request.taskTypes);
  const available = rows.filter((q) => q.availableAt <= now);
  const gated = available.some((q) => q.gates !== null || capped.has(`${q.namespace}:${q.taskType}`));
  const later = rows
    .filter((q) => q.gates !== null && q.availableAt > now)
    .map((q) => q.availableAt.getTime());
  const nextAt = later.length > 0 ? new Date(Math.min(...later)) : null;
  if (gated) return { tasks: [], taken: 0, gated, nextAt };
  const picked = available.sort(byPriority).slice(0, request.max);
  const tasks: LeasedTask[] = [];
  for (const q of picked) {
    // A row whose task is no longer queued (cancelled, paused run) is a stale wake-up: dropped.
    op.s.queue.delete(op.tx.journal, q.id);
    const leased = claimTask(op, q.runId, q.taskId, request);
    if (leased) tasks.push(leased);
  }
  return { tasks, taken: picked.length, gated, nextAt };
}

/** Leases queued tasks: the fast path while it has rows, then the gated path when limits apply. */
export function leaseTasks(op: Op, request: LeaseRequest): LeaseOutcome {
  const out: LeasedTask[] = [];
  let gated = false;
  let retryAt: Date | null = null;
  for (let round = 0; round < 10 && out.length < request.max; round++) {
    const step = leaseFast(op, { ...request, max: request.max - out.length });
    out.push(...step.tasks);
    gated = step.gated;
    retryAt = step.nextAt;
    if (
      gated ||
      step.taken < request.max - (out.length - step.tasks.length) ||
      step.tasks.length === step.taken
    )
      break;
  }
  if (!gated || out.length >= request.max) return { tasks: out, retryAt };
  const more = leaseGated(op, { ...request, max: request.max - out.length });
  const times = [retryAt, more.retryAt].filter((t): t is Date => t !== null).map((t) => t.getTime());
  return { tasks: [...out, ...more.tasks], retryAt: times.length > 0 ? new Date(Math.min(...times)) : null };
}

/**
 * Leases named tasks (named by a message from outside the store). Only tasks still queued at the named
 * attempt are leased. A task of a capped type is moved to the table queue instead, where the gated path
 * counts it; a task with a queue row is never leased here. Messages of leased or moved tasks in the
 * outbox need no more sending and are deleted.
 */
export function leaseTasksById(
  op: Op,
  request: LeaseRequest,
  named: readonly { runId: string; taskId: string; attempt: number }[],
): { tasks: LeasedTask[]; moved: { namespace: string; taskType: string }[] } {
  const types = new Set(request.taskTypes);
  const tasks: LeasedTask[] = [];
  const settled = new Set<string>();
  const movable: { t: TaskRow; namespace: string }[] = [];
  for (const n of named) {
    const t = op.s.tasks.get(key(n.runId, n.taskId));
    const run = t && op.s.runs.get(t.runId);
    if (!t || !run || t.attempt !== n.attempt || t.status !== 'queued' || run.status === 'paused') continue;
    if (t.taskType === null || !types.has(t.taskType)) continue;
    if (request.namespace !== ANY_NAMESPACE && run.namespace !== request.namespace) continue;
    const onTable = op.s.queue
      .pick(op.s.queueByType.keys(key(run.namespace, t.taskType)))
      .some((q) => q.runId === t.runId && q.taskId === t.id);
    if (onTable) continue;
    if (op.s.limits.has(key(run.namespace, 'concurrency', t.taskType))) {
      if (op.locks.take(op.tx, `task:${t.runId}:${t.id}`, 'wait'))
        movable.push({ t, namespace: run.namespace });
      settled.add(key(t.runId, t.id));
      continue;
    }
    const leased = claimTask(op, t.runId, t.id, request);
    if (leased) {
      tasks.push(leased);
      settled.add(key(t.runId, t.id));
    }
  }
  for (const o of [...op.s.outbox.values()])
    if (
      o.destination === TASKS_DESTINATION &&
      o.status === 'pending' &&
      o.taskId !== null &&
      settled.has(key(o.runId, o.taskId)) &&
      op.locks.take(op.tx, `outbox:${o.id}`, 'skip')
    )
      op.s.outbox.delete(op.tx.journal, o.id);
  const moved = new Map<string, { namespace: string; taskType: string }>();
  for (const { t, namespace } of movable) {
    enqueueTasks(op, [
      {
        taskId: t.id,
        runId: t.runId,
        attempt: t.attempt,
        namespace,
        taskType: t.taskType!,
        priority: t.priority,
        delayMs: 0,
      },
    ]);
    moved.set(`${namespace}:${t.taskType}`, { namespace, taskType: t.taskType! });
  }
  return { tasks, moved: [...moved.values()] };
}

/** Extends leases whose attempt, token and running status match; returns the ids still held. */
export function renewLeases(
  op: Op,
  tasks: readonly { runId: string; taskId: string; attempt: number; leaseToken: string }[],
  leaseMs: number,
  namespace?: string,
): string[] {
  const out: string[] = [];
  for (const r of tasks) {
    const t = op.s.tasks.get(key(r.runId, r.taskId));
    if (!t || t.attempt !== r.attempt || t.leaseToken !== r.leaseToken || t.status !== 'running') continue;
    if (namespace !== undefined && op.s.runs.get(t.runId)?.namespace !== namespace) continue;
    const until = plus(op.tx.now, leaseMs);
    putTask(op, { ...t, leaseExpiresAt: t.deadlineAt && t.deadlineAt < until ? t.deadlineAt : until });
    out.push(t.id);
  }
  return out;
}

/** The highest priority among available queued tasks of each type. */
export function queuedPriorities(
  op: Op,
  namespace: string,
  taskTypes: readonly string[],
): Map<string, number> {
  const out = new Map<string, number>();
  for (const q of queueRows(op, namespace, [...new Set(taskTypes)]))
    if (q.availableAt <= op.tx.now)
      out.set(q.taskType, Math.max(out.get(q.taskType) ?? q.priority, q.priority));
  return out;
}

/** Which of these attempts are still queued. */
export function queuedTasks(
  op: Op,
  tasks: readonly { runId: string; taskId: string; attempt: number }[],
): { runId: string; taskId: string; attempt: number }[] {
  return tasks.filter((r) => {
    const t = op.s.tasks.get(key(r.runId, r.taskId));
    return t !== undefined && t.attempt === r.attempt && t.status === 'queued';
  });
}
