import {
  type Arrival,
  type Definition,
  type JsonObject,
  type RunAttributes,
  type RunError,
  type TaskError,
  taskIdempotencyKey,
} from '@weft/core';
import {
  type DefinitionRecord,
  type HumanTaskRecord,
  type LeasedTask,
  type LoadedTask,
  type LockedRun,
  NO_PROGRESS,
  type OutboxPayload,
  type OutboxRow,
  type RunRecord,
  type ScheduleRecord,
  type TaskRecord,
} from '@weft/engine';
import type { LockTable, TxScope } from './locks.js';
import {
  type DefinitionRow,
  dec,
  type HumanRow,
  type MemoryState,
  type OutboxEntry,
  type RunRow,
  type ScheduleRow,
  type TaskRow,
} from './state.js';

/** What every operation works with: the tables, the transaction and the lock table. */
export interface Op {
  readonly s: MemoryState;
  readonly tx: TxScope;
  readonly locks: LockTable;
}

/** A definition row as the engine reads it. */
export const definitionRecord = (d: DefinitionRow): DefinitionRecord => ({
  id: d.id,
  namespace: d.namespace,
  name: d.name,
  version: d.version,
  hash: d.hash,
  source: d.source,
  definition: JSON.parse(d.definition) as Definition,
  createdAt: d.createdAt,
});

/** A run row as the engine reads it. */
export const runRecord = (r: RunRow): RunRecord => ({
  id: r.id,
  namespace: r.namespace,
  definitionId: r.definitionId,
  definitionName: r.definitionName,
  definitionVersion: r.definitionVersion,
  status: r.status,
  input: dec(r.input),
  output: dec(r.output),
  error: dec<RunError>(r.error),
  vars: JSON.parse(r.vars) as JsonObject,
  attributes: JSON.parse(r.attributes) as RunAttributes,
  sinksDone: r.sinksDone,
  createdAt: r.createdAt,
  finishedAt: r.finishedAt,
  parent: r.parent ? { ...r.parent } : null,
  progress: { ...(r.progress ?? NO_PROGRESS) },
  traceContext: r.traceContext,
});

/** A run locked by the operation's transaction, with its last history seq and the transaction's time. */
export const lockedRun = (op: Op, r: RunRow): LockedRun => ({
  ...runRecord(r),
  lastSeq: op.s.lastSeq(r.id),
  now: op.tx.now,
});

/** An attempt as a decision loads it. */
export const loadedTask = (t: TaskRow): LoadedTask => ({
  id: t.id,
  runId: t.runId,
  nodeId: t.nodeId,
  iteration: t.iteration,
  attempt: t.attempt,
  status: t.status,
  input: dec(t.input),
  output: dec(t.output),
  error: dec<TaskError>(t.error),
  arrivals: dec<Arrival[]>(t.arrivals) ?? [],
});

/** An attempt as the API lists it. */
export const taskRecord = (t: TaskRow): TaskRecord => ({
  id: t.id,
  runId: t.runId,
  nodeId: t.nodeId,
  iteration: t.iteration,
  attempt: t.attempt,
  status: t.status,
  taskType: t.taskType,
  priority: t.priority,
  timeoutMs: t.timeoutMs,
  input: dec(t.input),
  output: dec(t.output),
  error: dec<TaskError>(t.error),
  arrivals: dec<Arrival[]>(t.arrivals) ?? [],
  worker: t.worker,
  leaseExpiresAt: t.leaseExpiresAt,
  deadlineAt: t.deadlineAt,
  createdAt: t.createdAt,
  startedAt: t.startedAt,
  finishedAt: t.finishedAt,
  childRunId: t.childRunId,
});

/** An attempt as a worker gets it with its lease. */
export const leasedTask = (t: TaskRow, run: Pick<RunRow, 'definitionName' | 'traceContext'>): LeasedTask => ({
  id: t.id,
  runId: t.runId,
  nodeId: t.nodeId,
  iteration: t.iteration,
  attempt: t.attempt,
  taskType: t.taskType!,
  input: dec(t.input),
  leaseToken: t.leaseToken!,
  leaseExpiresAt: t.leaseExpiresAt!,
  deadlineAt: t.deadlineAt,
  definitionName: run.definitionName,
  idempotencyKey: taskIdempotencyKey(t.runId, t.nodeId, t.iteration),
  traceContext: run.traceContext,
});

/** An outbox row as relays and the API read it. */
export const outboxRow = (o: OutboxEntry): OutboxRow => ({
  runId: o.runId,
  id: String(o.id),
  namespace: o.namespace,
  taskId: o.taskId,
  destination: o.destination,
  messageId: o.messageId,
  payload: JSON.parse(o.payload) as OutboxPayload,
  status: o.status,
  attempts: o.attempts,
  nextAttemptAt: o.nextAttemptAt,
  lastError: o.lastError,
  createdAt: o.createdAt,
  deadAt: o.deadAt,
});

/**
 * A human task as the inbox shows it. It counts as open only while its attempt runs: an attempt ended
 * otherwise (run cancelled, finished by an operator) shows as completed or cancelled.
 */
export function humanRecord(h: HumanRow, task: TaskRow | undefined): HumanTaskRecord {
  const state =
    h.state !== 'open' || task?.status === 'running'
      ? h.state
      : task?.status === 'completed'
        ? 'completed'
        : 'cancelled';
  return {
    runId: h.runId,
    taskId: h.taskId,
    namespace: h.namespace,
    definition: h.definition,
    nodeId: h.nodeId,
    iteration: h.iteration,
    attempt: h.attempt,
    title: h.title,
    description: h.description,
    assignees: [...h.assignees],
    form: dec<JsonObject>(h.form),
    state,
    input: task ? dec(task.input) : null,
    claimedBy: h.claimedBy,
    claimedAt: h.claimedAt,
    deadlineAt: h.deadlineAt,
    completedBy: h.completedBy,
    completedAt: h.completedAt,
    data: dec(h.data),
    createdAt: h.createdAt,
  };
}

/** A schedule row as the engine reads it. */
export const scheduleRecord = (s: ScheduleRow): ScheduleRecord => ({
  namespace: s.namespace,
  name: s.name,
  definition: s.definition,
  version: s.version,
  cron: s.cron,
  timezone: s.timezone,
  input: dec(s.input) ?? {},
  overlap: s.overlap,
  paused: s.paused,
  nextAt: s.nextAt,
  bufferedAt: s.bufferedAt,
  lastAt: s.lastAt,
  lastRunId: s.lastRunId,
  lastOutcome: s.lastOutcome,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
});

/** Orders strings as PostgreSQL's C collation does for ASCII ids. */
export const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** `at` plus `ms` milliseconds. */
export const plus = (at: Date, ms: number): Date => new Date(at.getTime() + ms);
