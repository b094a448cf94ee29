import { randomUUID } from 'node:crypto';
import type { LeasedTask, LeaseRequest } from '@weft/engine';
import { leasedTask, type Op, plus } from './convert.js';
import { key, type TaskRow } from './state.js';
import { leaseEnd, putTask } from './tasks.js';

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
  return leasedTask(row, run);
}
