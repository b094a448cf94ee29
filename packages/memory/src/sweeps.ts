import { type ExpiredTask, RUNS_DESTINATION } from '@weft/engine';
import { byText, type Op, plus } from './convert.js';
import { insertOutboxRow } from './outbox.js';
import { enc, key, type RunRow } from './state.js';
import { attemptOf, putTask } from './tasks.js';

/** Running tasks whose lease or deadline has passed, oldest first. */
export function expiredLeases(op: Op, limit: number): { taskId: string; runId: string }[] {
  const out = op.s.tasks
    .pick(op.s.runningTasks.keys('running'))
    .filter((t) => t.leaseExpiresAt !== null && t.leaseExpiresAt <= op.tx.now);
  out.sort((a, b) => a.leaseExpiresAt!.getTime() - b.leaseExpiresAt!.getTime());
  return out.slice(0, limit).map((t) => ({ taskId: t.id, runId: t.runId }));
}

/**
 * Ends attempts whose lease ran out, `timed_out`, re-checking under the lock that they are still running
 * and expired (a task that just finished is left alone). An attempt that was waiting for a child run
 * cancels that child through the outbox.
 */
export function expireLeases(op: Op, tasks: readonly { runId: string; taskId: string }[]): ExpiredTask[] {
  const now = op.tx.now;
  const out: ExpiredTask[] = [];
  for (const r of tasks) {
    const t = op.s.tasks.get(key(r.runId, r.taskId));
    if (t?.status !== 'running' || t.leaseExpiresAt === null || t.leaseExpiresAt > now) continue;
    if (!op.locks.take(op.tx, `task:${t.runId}:${t.id}`, 'skip')) continue;
    const timedOut = t.deadlineAt !== null && t.deadlineAt <= now;
    putTask(op, {
      ...t,
      status: 'timed_out',
      finishedAt: now,
      error: enc(
        timedOut
          ? {
              reason: 'timeout',
              retryable: true,
              message: `the attempt ran longer than its timeout of ${t.timeoutMs ?? ''} ms`,
            }
          : {
              reason: 'lease_expired',
              retryable: true,
              message: `worker ${t.worker ?? '(unknown)'} stopped renewing its lease`,
            },
      ),
    });
    if (t.childRunId !== null)
      insertOutboxRow(op, {
        runId: t.runId,
        namespace: op.s.runs.get(t.runId)?.namespace ?? '',
        taskId: null,
        destination: RUNS_DESTINATION,
        messageId: `cancel:${t.childRunId}`,
        payload: {
          kind: 'cancel_run',
          runId: t.childRunId,
          by: `parent run ${t.runId}`,
          reason: 'the parent attempt timed out',
        },
      });
    out.push({
      runId: t.runId,
      taskId: t.id,
      nodeId: t.nodeId,
      iteration: t.iteration,
      attempt: t.attempt,
      worker: t.worker,
      timedOut,
    });
  }
  return out;
}

/** Says which attempts still run (their children may be started); their rows are locked. */
export function lockParentTasks(
  op: Op,
  attempts: readonly { runId: string; nodeId: string; iteration: string; attempt: number }[],
): { runId: string; nodeId: string; iteration: string; attempt: number; running: boolean }[] {
  const out: { runId: string; nodeId: string; iteration: string; attempt: number; running: boolean }[] = [];
  for (const a of attempts) {
    const t = attemptOf(op, a.runId, a.nodeId, a.iteration, a.attempt);
    if (!t) continue;
    op.locks.take(op.tx, `task:${t.runId}:${t.id}`, 'wait');
    out.push({
      runId: t.runId,
      nodeId: t.nodeId,
      iteration: t.iteration,
      attempt: t.attempt,
      running: t.status === 'running',
    });
  }
  return out;
}

/** True when nothing can wake a running (or compensating) run and it has been idle for `idleMs`. */
function isStuck(op: Op, r: RunRow, idleMs: number): boolean {
  if (r.status !== 'running' && r.status !== 'compensating') return false;
  for (const t of op.s.tasks.pick(op.s.tasksByRun.keys(r.id)))
    if (t.status === 'queued' || t.status === 'running') return false;
  if (op.s.timersByRun.keys(r.id).size > 0) return false;
  if (op.s.decideQueue.has(r.id)) return false;
  if (op.s.inboxByRun.keys(r.id).size > 0) return false;
  const last = op.s.history.get(r.id)?.at(-1)?.at ?? r.createdAt;
  return last <= plus(op.tx.now, -idleMs);
}

/** Running and compensating runs with nothing that could wake them, idle for `idleMs`. */
export function stuckRuns(op: Op, idleMs: number, limit: number): string[] {
  const out: string[] = [];
  for (const r of op.s.runs.values()) if (isStuck(op, r, idleMs)) out.push(r.id);
  return out.sort(byText).slice(0, limit);
}

/** The given runs that are stuck now. */
export function stillStuck(op: Op, runIds: readonly string[], idleMs: number): string[] {
  return runIds.filter((id) => {
    const r = op.s.runs.get(id);
    return r !== undefined && isStuck(op, r, idleMs);
  });
}
