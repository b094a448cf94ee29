import type { BlobDeletionStore } from './blob-deletion-records.js';
import type { ForkLinks } from './fork-records.js';
import type { HumanTaskRecord, InboxFilter } from './human-records.js';
import type { LimitRecord, LimitUsage } from './limit-records.js';
import type { OutboxBacklog, WorkerSighting } from './operator-records.js';
import type { DeadLetterFilter, OutboxRow } from './outbox-records.js';
import type { DefinitionRecord, HistoryRecord, RunRecord, TaskRecord } from './records.js';
import type { RepairCheck, RepairFilter, RepairRecord } from './repair-records.js';
import type { RetentionStore } from './retention-records.js';
import type { Page, RunFilter } from './run-filter.js';
import type { ScheduleRecord } from './schedule-records.js';
import type { StoreTx } from './store-tx.js';
import type { IdempotentRun, RunCounts, Wakeup } from './store-types.js';
import type { WorkloadSnapshot } from './workload-records.js';

export type { StoreTx } from './store-tx.js';
export type {
  ExpiredTask,
  FastLease,
  IdempotentRun,
  LeaseOutcome,
  LeaseRequest,
  LoadedTask,
  MailboxStateKey,
  NewRun,
  RunCounts,
  StateKey,
  Wakeup,
} from './store-types.js';

/**
 * Persistence for the engine. Everything that must be atomic happens inside `transaction`; the engine
 * never reaches the database any other way. The Postgres store is the production implementation;
 * MemoryStore keeps everything in one process. `storeConformance` (`@weft/testing/conformance`) checks
 * the behaviour every store must have; docs/custom-store.md explains how to write one.
 *
 * `transaction` runs `fn` atomically: if `fn` throws, nothing it did is kept. Once `fn` has returned, or
 * `write` was called with `commit`, everything is kept.
 */
export interface Store {
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** Optional capability: deleting finished runs (retention). A store without it keeps runs forever. */
  readonly retention?: RetentionStore;
  /**
   * Optional capability: deleting the blobs of purged runs no run references any more (invariant 30). A store
   * with it also implements `StoreTx.referenceBlobs`.
   */
  readonly blobDeletions?: BlobDeletionStore;

  // Definitions (immutable once stored).
  getDefinitionById(id: string): Promise<DefinitionRecord | null>;
  getDefinition(namespace: string, name: string, version?: number): Promise<DefinitionRecord | null>;
  listDefinitions(
    namespace: string,
  ): Promise<{ name: string; latestVersion: number; versions: number; updatedAt: Date }[]>;
  listDefinitionVersions(namespace: string, name: string): Promise<DefinitionRecord[]>;
  /** The latest version of each definition whose latest version has a trigger on `event`, by name. */
  listTriggeredDefinitions(namespace: string, event: string): Promise<DefinitionRecord[]>;

  // Reads for the API; not part of any decision.
  getRun(id: string): Promise<RunRecord | null>;
  /**
   * Those of these runs that exist, in one read (any order). Optional: without it, whoever awaits runs
   * reads them one by one.
   */
  getRuns?(ids: readonly string[]): Promise<RunRecord[]>;
  listRuns(filter: RunFilter): Promise<Page<RunRecord>>;
  countRuns(namespace: string, ids?: readonly string[]): Promise<RunCounts>;
  /**
   * Which of these runs have ended (one read for all). Optional: without it, whoever awaits runs reads
   * each of them when it looks again for a lost notification of an end.
   */
  endedRuns?(ids: readonly string[]): Promise<string[]>;
  /** How many runs match a filter, counted up to `cap` (a count of `cap` means "at least"). */
  countMatchingRuns(filter: Omit<RunFilter, 'cursor' | 'limit'>, cap: number): Promise<number>;
  /** Namespaces that have something deployed. */
  listNamespaces(): Promise<string[]>;
  /** The outbox of a namespace, per destination. */
  outboxBacklog(namespace: string): Promise<OutboxBacklog[]>;
  /**
   * What is queued, running and waiting across every namespace, for metrics (read at scrape time, so a
   * few cheap statements). Optional: a store without it serves no workload gauges.
   */
  workload?(): Promise<WorkloadSnapshot>;
  /** Remembers workers seen asking for tasks (one write for many polls); forgets those unseen for a day. */
  recordWorkers(sightings: readonly WorkerSighting[]): Promise<void>;
  /** Workers of a namespace seen since a time, most recently seen first. */
  listWorkers(namespace: string, since: Date): Promise<WorkerSighting[]>;
  listTasks(runId: string): Promise<TaskRecord[]>;
  readHistory(runId: string, afterSeq: number, limit: number): Promise<HistoryRecord[]>;
  /** The run a run was forked from, and the runs forked from it. */
  forkLinks(runId: string): Promise<ForkLinks>;

  /** Run ids with a pending decision that is due, oldest first. Advisory: callers may overlap. */
  dueDecisions(limit: number): Promise<string[]>;
  /** Timers due now, oldest first (advisory, no locks). */
  dueTimers(limit: number): Promise<{ id: string; runId: string }[]>;
  /** Running tasks whose lease or deadline has passed (advisory, no locks). */
  expiredLeases(limit: number): Promise<{ taskId: string; runId: string }[]>;
  /** Destinations that have outbox rows due for delivery (advisory, no locks). */
  outboxDestinations(): Promise<string[]>;
  /** Dead-lettered outbox rows, newest first. */
  listDeadLetters(filter: DeadLetterFilter): Promise<Page<OutboxRow>>;
  /** The database's current time. */
  now(): Promise<Date>;

  /** The runs named by idempotency keys (outside any transaction: after the claiming one ended). */
  getIdempotentRuns(keys: readonly { namespace: string; key: string }[]): Promise<IdempotentRun[]>;
  /** Limits of a namespace, or of every namespace. */
  listLimits(namespace?: string): Promise<LimitRecord[]>;
  /** Limits of a namespace with how much of each is in use. */
  limitUsage(namespace: string): Promise<LimitUsage[]>;
  /** The inbox: human tasks, oldest first. */
  listHumanTasks(filter: InboxFilter): Promise<HumanTaskRecord[]>;
  getHumanTask(taskId: string): Promise<HumanTaskRecord | null>;
  /**
   * Running and compensating runs with nothing that can wake them: no queued or running task, no timer,
   * no pending decision or inbox event, and no history for `idleMs`. Advisory (no locks).
   */
  stuckRuns(idleMs: number, limit: number): Promise<string[]>;
  /**
   * Checks repairs older than `afterMs` not yet checked: did each run move after its repair? Returns how many
   * were found moved and how many still stuck. Optional, with `recordRepairs`.
   */
  checkRepairs?(afterMs: number, limit: number): Promise<RepairCheck>;
  /** The sweeper's audit of a namespace, newest first. Optional, with `recordRepairs`. */
  listRepairs?(filter: RepairFilter): Promise<RepairRecord[]>;
  /** Marks inbox rows whose attempt ended without an answer (run cancelled or ended) as cancelled. */
  tidyInbox(limit: number): Promise<number>;
  listSchedules(namespace: string): Promise<ScheduleRecord[]>;
  getSchedule(namespace: string, name: string): Promise<ScheduleRecord | null>;
  /** Schedules due now, or holding a buffered start (advisory, no locks). */
  dueSchedules(limit: number): Promise<{ namespace: string; name: string }[]>;
  /** Publishes wake-ups to the other processes sharing the store (outside any transaction: they are hints). */
  notify(wakeups: readonly Wakeup[]): Promise<void>;
  /** Listens for wake-ups published by other processes sharing the store; returns a function that stops. */
  listen(onWakeup: (wakeup: Wakeup) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
