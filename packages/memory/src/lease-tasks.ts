import {
  type FastLease,
  type LeasedTask,
  type LeaseOutcome,
  type LeaseRequest,
  leaseInRoundsNow,
} from '@weft/engine';
import { claimTask } from './claim.js';
import { type Op, plus } from './convert.js';
import { leaseGated } from './lease-gated.js';
import { byPriority, cappedTypes, queueRows } from './queue.js';
import { key } from './state.js';
import { putTask } from './tasks.js';

/**
 * One round of the fast path: rows under no limit, best first. Takes nothing (and says `gated`) when rows
 * under a limit wait for these types: those go through the gated path, which counts each limit.
 */
export function leaseFast(op: Op, request: LeaseRequest): FastLease {
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
  return leaseInRoundsNow(request, { fast: (r) => leaseFast(op, r), gated: (r) => leaseGated(op, r) });
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
