import type { TaskStatus } from '@weft/core';
import {
  explainRefusal,
  type LoadedTask,
  type NewTaskRow,
  type ReportedTask,
  type ReportVerdict,
  RUNS_DESTINATION,
  reportRefusal,
  type StateKey,
  type TaskReport,
  type TaskUpdateRow,
} from '@weft/engine';
import { byText, loadedTask, type Op, plus } from './convert.js';
import { requestDecision } from './decisions.js';
import { insertOutboxRow } from './outbox.js';
import { enc, FINAL, key, OPEN, type TaskRow } from './state.js';

/** When a lease given now ends: after `leaseMs`, but never after the attempt's timeout. */
export function leaseEnd(now: Date, leaseMs: number, timeoutMs: number | null): Date {
  return plus(now, timeoutMs === null ? leaseMs : Math.min(leaseMs, timeoutMs));
}

const deadline = (now: Date, timeoutMs: number | null | undefined): Date | null =>
  timeoutMs === null || timeoutMs === undefined ? null : plus(now, timeoutMs);

/** The task row of an attempt, by its identity. */
export function attemptOf(op: Op, runId: string, nodeId: string, iteration: string, attempt: number) {
  for (const k of op.s.tasksByInstance.keys(key(runId, nodeId, iteration))) {
    const t = op.s.tasks.get(k)!;
    if (t.attempt === attempt) return t;
  }
  return undefined;
}

/** The latest attempt of a node instance. */
export function latestAttempt(op: Op, runId: string, nodeId: string, iteration: string) {
  let latest: TaskRow | undefined;
  for (const k of op.s.tasksByInstance.keys(key(runId, nodeId, iteration))) {
    const t = op.s.tasks.get(k)!;
    if (!latest || t.attempt > latest.attempt) latest = t;
  }
  return latest;
}

/** Replaces a task row. */
export function putTask(op: Op, row: TaskRow): void {
  op.s.tasks.set(op.tx.journal, key(row.runId, row.id), row);
}

/**
 * Inserts new attempts; one whose identity (run, node, iteration, attempt) exists is absorbed, and its
 * run is asked for another decision (the decision that wanted it saw stale state). Returns the absorbed.
 */
export function insertTasks(op: Op, rows: readonly NewTaskRow[]): NewTaskRow[] {
  const absorbed: NewTaskRow[] = [];
  const now = op.tx.now;
  for (const r of rows) {
    if (attemptOf(op, r.runId, r.nodeId, r.iteration, r.attempt)) {
      absorbed.push(r);
      continue;
    }
    const started = r.lease !== null || r.status === 'running';
    putTask(op, {
      runId: r.runId,
      id: r.id,
      nodeId: r.nodeId,
      iteration: r.iteration,
      attempt: r.attempt,
      status: r.status,
      taskType: r.taskType,
      priority: r.priority,
      timeoutMs: r.timeoutMs,
      input: enc(r.input),
      output: enc(r.output),
      error: enc(r.error),
      arrivals: r.arrivals.length > 0 ? JSON.stringify(r.arrivals) : null,
      worker: r.lease?.worker ?? null,
      leaseToken: r.lease?.token ?? null,
      startedAt: started ? now : null,
      deadlineAt: started ? deadline(now, r.timeoutMs) : null,
      // A running attempt with no worker (a sub-workflow waiting for its child) expires at its timeout.
      leaseExpiresAt: r.lease
        ? leaseEnd(now, r.lease.leaseMs, r.timeoutMs)
        : r.status === 'running'
          ? deadline(now, r.timeoutMs)
          : null,
      createdAt: now,
      finishedAt: FINAL.has(r.status) ? now : null,
      childRunId: r.childRunId ?? null,
      retryAt: r.delayMs ? plus(now, r.delayMs) : null,
    });
  }
  for (const runId of new Set(absorbed.map((r) => r.runId).sort(byText)))
    requestDecision(op, runId, 'absorbed duplicate', 0, false);
  return absorbed;
}

/** Changes attempts still in their expected status (a guard against overwriting a finished attempt). */
export function updateTasks(op: Op, rows: readonly TaskUpdateRow[]): void {
  const now = op.tx.now;
  for (const u of rows) {
    const t = attemptOf(op, u.runId, u.nodeId, u.iteration, u.attempt);
    if (!t || t.status !== u.expect) continue;
    const timeoutMs = u.timeoutMs ?? null;
    const starts = u.lease != null || (u.status === 'running' && t.status !== 'running');
    putTask(op, {
      ...t,
      status: u.status,
      input: u.input !== undefined ? enc(u.input) : t.input,
      output: u.output !== undefined ? enc(u.output) : t.output,
      error: u.error !== undefined ? enc(u.error) : t.error,
      arrivals: u.arrivals ? JSON.stringify(u.arrivals) : t.arrivals,
      taskType: u.taskType ?? t.taskType,
      priority: u.priority ?? t.priority,
      timeoutMs: u.taskType != null ? timeoutMs : t.timeoutMs,
      worker: u.lease?.worker ?? t.worker,
      leaseToken: u.lease?.token ?? t.leaseToken,
      startedAt: starts ? now : t.startedAt,
      deadlineAt: starts ? deadline(now, timeoutMs) : t.deadlineAt,
      leaseExpiresAt: u.lease
        ? leaseEnd(now, u.lease.leaseMs, timeoutMs)
        : u.status === 'running' && t.status !== 'running'
          ? deadline(now, timeoutMs)
          : t.leaseExpiresAt,
      finishedAt: FINAL.has(u.status) ? now : t.finishedAt,
      childRunId: u.childRunId ?? t.childRunId,
    });
  }
}

/** Cancels every unfinished attempt of the given runs and deletes their timers and mailboxes. */
export function cancelOpenWork(op: Op, runs: readonly { runId: string; reason: string }[]): void {
  const j = op.tx.journal;
  for (const { runId, reason } of runs) {
    for (const t of op.s.tasks.pick(op.s.tasksByRun.keys(runId))) {
      if (!OPEN.has(t.status)) continue;
      putTask(op, {
        ...t,
        status: 'cancelled',
        finishedAt: op.tx.now,
        error: enc({ reason: 'cancelled', retryable: false, message: reason }),
      });
    }
    for (const k of [...op.s.timersByRun.keys(runId)]) op.s.timers.delete(j, k);
    for (const k of [...op.s.mailboxesByRun.keys(runId)]) op.s.mailboxes.delete(j, k);
  }
}

/** Writes a `cancel_run` outbox row for the child run of each unfinished attempt of these runs. */
export function stopChildren(
  op: Op,
  runs: readonly { runId: string; reason: string; mode: 'cancel' | 'terminate' }[],
): void {
  for (const k of runs) {
    const run = op.s.runs.get(k.runId);
    if (!run) continue;
    for (const t of op.s.tasks.pick(op.s.tasksByRun.keys(k.runId))) {
      if (t.childRunId === null || !OPEN.has(t.status)) continue;
      insertOutboxRow(op, {
        runId: t.runId,
        namespace: run.namespace,
        taskId: null,
        destination: RUNS_DESTINATION,
        messageId: `${k.mode}:${t.childRunId}`,
        payload: {
          kind: 'cancel_run',
          runId: t.childRunId,
          by: `parent run ${t.runId}`,
          reason: k.reason,
          mode: k.mode,
        },
      });
    }
  }
}

/** The latest attempt of each requested node instance. */
export function loadTasks(op: Op, keys: readonly StateKey[]): LoadedTask[] {
  const out: LoadedTask[] = [];
  for (const k of keys) {
    const t = latestAttempt(op, k.runId, k.nodeId, k.iteration);
    if (t) out.push(loadedTask(t));
  }
  return out;
}

/** The latest attempt of every node instance of the given runs. */
export function loadRunTasks(op: Op, runIds: readonly string[]): LoadedTask[] {
  const out: TaskRow[] = [];
  for (const runId of [...new Set(runIds)].sort(byText)) {
    const latest = new Map<string, TaskRow>();
    for (const t of op.s.tasks.pick(op.s.tasksByRun.keys(runId))) {
      const k = key(t.nodeId, t.iteration);
      const seen = latest.get(k);
      if (!seen || t.attempt > seen.attempt) latest.set(k, t);
    }
    out.push(
      ...[...latest.values()].sort((a, b) => byText(a.nodeId, b.nodeId) || byText(a.iteration, b.iteration)),
    );
  }
  return out.map(loadedTask);
}

/** The latest attempt of each requested node instance, locked until the transaction ends. */
export function lockTasks(op: Op, keys: readonly StateKey[]): LoadedTask[] {
  const rows = new Map<string, TaskRow>();
  for (const k of keys) {
    const t = latestAttempt(op, k.runId, k.nodeId, k.iteration);
    if (t) rows.set(key(t.runId, t.id), t);
  }
  const sorted = [...rows.values()].sort((a, b) => byText(a.runId, b.runId) || byText(a.id, b.id));
  for (const t of sorted) op.locks.take(op.tx, `task:${t.runId}:${t.id}`, 'wait');
  return sorted.map(loadedTask);
}

/** A reported task as it is now, for the refusal wording every store shares; null when there is none. */
function reported(op: Op, r: { runId: string; taskId: string }): ReportedTask | null {
  const t = op.s.tasks.get(key(r.runId, r.taskId));
  if (!t) return null;
  return {
    id: t.id,
    nodeId: t.nodeId,
    iteration: t.iteration,
    attempt: t.attempt,
    status: t.status,
    leaseToken: t.leaseToken,
    pastDeadline: t.deadlineAt !== null && t.deadlineAt <= op.tx.now,
    latest: latestAttempt(op, t.runId, t.nodeId, t.iteration)!.attempt,
    namespace: op.s.runs.get(t.runId)?.namespace,
  };
}

/**
 * Applies workers' reports. A report lands only while its attempt and lease token match and the attempt
 * is still running and inside its deadline: this is the fence of the claim contract (a stale lease token,
 * an attempt that timed out or was cancelled, a later attempt: refused, with the reason).
 */
export function finishTasks(op: Op, reports: readonly TaskReport[], namespace?: string): ReportVerdict[] {
  const done = new Map<string, ReportVerdict>();
  return reports.map((r): ReportVerdict => {
    const k = key(r.runId, r.taskId);
    // A repeat of a report that landed gets its verdict; a report with another token or attempt does not.
    const earlier = done.get(`${k}/${r.attempt}/${r.leaseToken}`);
    if (earlier) return earlier;
    const refused = reportRefusal(r, reported(op, r), namespace);
    if (refused) return refused;
    const t = op.s.tasks.get(k)!;
    const status: TaskStatus = r.outcome.kind === 'completed' ? 'completed' : 'failed';
    putTask(op, {
      ...t,
      status,
      output: r.outcome.kind === 'completed' ? enc(r.outcome.output) : null,
      error: r.outcome.kind === 'failed' ? enc(r.outcome.error) : null,
      finishedAt: op.tx.now,
    });
    const verdict: ReportVerdict = {
      taskId: r.taskId,
      accepted: true,
      nodeId: t.nodeId,
      iteration: t.iteration,
      attempt: t.attempt,
    };
    done.set(`${k}/${r.attempt}/${r.leaseToken}`, verdict);
    return verdict;
  });
}

/** Says why reports on these tasks would be refused, one verdict per task. */
export function explainRefusals(
  op: Op,
  reports: readonly Pick<TaskReport, 'runId' | 'taskId' | 'attempt' | 'leaseToken'>[],
  namespace?: string,
): ReportVerdict[] {
  const out = new Map<string, ReportVerdict>();
  for (const r of reports) out.set(r.taskId, explainRefusal(r, reported(op, r), namespace));
  return [...out.values()];
}
