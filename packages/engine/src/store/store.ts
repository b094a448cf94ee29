import type { Definition, Json, Mailbox, RunAttributes, RunEvent, RunStatus, TaskState } from '@weft/core';
import type { BlobDeletionStore, BlobUse } from './blob-deletion-records.js';
import type { ForkLinks, RunFork } from './fork-records.js';
import type { HumanTaskRecord, InboxFilter } from './human-records.js';
import type { LimitRecord, LimitUsage } from './limit-records.js';
import type { RunMoveWrite } from './move-records.js';
import type { OutboxBacklog, WorkerSighting } from './operator-records.js';
import type {
  DeadLetterFilter,
  OutboxOutcome,
  OutboxRetryPolicy,
  OutboxRow,
  ReplaySelection,
} from './outbox-records.js';
import type {
  DefinitionRecord,
  HistoryRecord,
  InboxItem,
  LeasedTask,
  LockedRun,
  ReportVerdict,
  RunParent,
  RunRecord,
  TaskRecord,
  TaskReport,
  WriteSet,
} from './records.js';
import type { RepairCheck, RepairFilter, RepairRecord, RepairRow } from './repair-records.js';
import type { RetentionStore } from './retention-records.js';
import type { Page, RunFilter } from './run-filter.js';
import type { ScheduleFire, ScheduleRecord, ScheduleSpec } from './schedule-records.js';
import type { WorkloadSnapshot } from './workload-records.js';

/** A hint that something is ready: it makes waiting workers and loops look now instead of at their next poll. */
export type Wakeup =
  | { readonly kind: 'tasks'; readonly namespace: string; readonly taskTypes: readonly string[] }
  | { readonly kind: 'decisions' }
  | { readonly kind: 'timers' }
  /** Outbox rows were written: relays look now. */
  | { readonly kind: 'outbox' }
  /** A limit changed: reload the limit book. */
  | { readonly kind: 'limits' }
  /** Capacity under a limit of the namespace was freed: every poll there looks again. */
  | { readonly kind: 'gates'; readonly namespace: string }
  /** These runs ended (completed, failed, cancelled or terminated): whoever awaits them reads them now. */
  | { readonly kind: 'ended'; readonly runIds: readonly string[] };

/** A node instance of a run, to load for a decision. */
export interface StateKey {
  readonly runId: string;
  readonly nodeId: string;
  readonly iteration: string;
}

/** A signal mailbox of a run, to load for a decision. */
export interface MailboxStateKey {
  readonly runId: string;
  readonly name: string;
  readonly correlation: string;
}

/** A node instance's latest attempt as loaded for a decision, with its run and row id. */
export type LoadedTask = TaskState & { readonly id: string; readonly runId: string };

/** A run to insert. */
export interface NewRun {
  readonly id: string;
  readonly namespace: string;
  readonly definitionId: string;
  readonly definitionName: string;
  readonly definitionVersion: number;
  readonly input: Json;
  /** The start's idempotency key: the run is inserted only if this transaction won the key. */
  readonly idempotencyKey?: string;
  /** Set for a run started by a node of another run. */
  readonly parent?: RunParent;
  /** The idempotency key of a start by a node: one run per key (see `childStartKey`). */
  readonly startKey?: string;
  /** Search attributes given at start. */
  readonly attributes?: RunAttributes;
  /** The W3C `traceparent` of the span that starts the run, kept with it (see RunRecord). */
  readonly traceContext?: string | null;
}

/** An idempotency key and the run it started. */
export interface IdempotentRun {
  readonly namespace: string;
  readonly key: string;
  readonly runId: string;
  readonly definitionName: string;
}

/** What a lease request got: the tasks, and when a task held back by a rate limit may be tried again. */
export interface LeaseOutcome {
  readonly tasks: LeasedTask[];
  readonly retryAt: Date | null;
}

/** Counts of runs by status, for progress displays. */
export type RunCounts = Partial<Record<RunStatus, number>>;

/** What a lease request asks for. */
export interface LeaseRequest {
  readonly namespace: string;
  readonly taskTypes: readonly string[];
  readonly max: number;
  readonly worker: string;
  readonly leaseMs: number;
}

/** A task whose lease (or attempt deadline) ran out, ended by the lease reaper. */
export interface ExpiredTask {
  readonly runId: string;
  readonly taskId: string;
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
  /** True when the attempt's own timeout passed; false when the worker stopped heartbeating. */
  readonly timedOut: boolean;
  readonly worker: string | null;
}

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

/**
 * Operations inside one transaction. Lock order, everywhere: run rows, then decide-queue rows, then queue
 * rows, then task rows, then timers. Code that cannot wait for a run lock takes it with `skip`.
 */
export interface StoreTx {
  /**
   * Optional, with `Store.blobDeletions`: records that runs reference blobs, in this transaction, holding off
   * any deleter of those blobs until it commits. Called only for large payloads; the caller checks each blob
   * is still in the blob store once this returns (invariant 30).
   */
  referenceBlobs?(uses: readonly BlobUse[]): Promise<void>;
  /** Inserts a definition version unless one with the same hash exists; serialised per name. */
  deployDefinition(
    namespace: string,
    name: string,
    hash: string,
    source: string,
    definition: Definition,
  ): Promise<{ record: DefinitionRecord; created: boolean }>;

  /** A definition version by id, read in this transaction. */
  getDefinitionById(id: string): Promise<DefinitionRecord | null>;

  /**
   * Inserts new runs, `running`, and returns them locked (the inserting transaction holds their row
   * locks). A run is left out when its namespace's quota of running runs is full (call `lockQuotas`
   * first, in the same pipeline) or when it has an idempotency key this transaction did not win.
   */
  insertRuns(runs: readonly NewRun[]): Promise<LockedRun[]>;
  /**
   * Claims idempotency keys for runs about to be inserted; returns the keys won. A key another
   * transaction holds makes this wait for it; if that one commits, the key is lost. Keys are taken in
   * order, so two batches never deadlock on each other.
   */
  claimIdempotencyKeys(rows: readonly IdempotentRun[]): Promise<{ namespace: string; key: string }[]>;
  /** Gives back keys won by runs that were not inserted after all. */
  releaseIdempotencyKeys(keys: readonly { namespace: string; key: string }[]): Promise<void>;
  /**
   * Takes the quota lock (a transaction-scoped advisory lock) of each namespace that has a quota, so
   * that counting running runs and inserting new ones cannot interleave with another starter's.
   */
  lockQuotas(namespaces: readonly string[]): Promise<void>;
  /** The quota and the running runs of namespaces, for explaining a refusal. */
  quotaUsage(namespaces: readonly string[]): Promise<{ namespace: string; max: number; used: number }[]>;
  /** Creates or replaces limits. */
  setLimits(limits: readonly LimitRecord[]): Promise<void>;
  /** Deletes a limit (the limit is lifted); false when there was none. */
  deleteLimit(namespace: string, kind: LimitRecord['kind'], name: string): Promise<boolean>;
  /**
   * The highest priority queued (and available) for each task type: a task of lower priority must not go
   * straight to a worker past them.
   */
  queuedPriorities(namespace: string, taskTypes: readonly string[]): Promise<Map<string, number>>;

  /** Claims an open human task for a person: one conditional UPDATE, so one claim wins. */
  claimHumanTask(namespace: string, taskId: string, user: string): Promise<HumanTaskRecord | null>;
  /** Releases a claim held by `user`. */
  releaseHumanTask(namespace: string, taskId: string, user: string): Promise<HumanTaskRecord | null>;
  /**
   * Answers an open human task (claimed by `user`, or by nobody): the inbox row and the attempt are
   * completed together. The caller holds the run lock. Returns false when the task is not open.
   */
  completeHumanTask(
    namespace: string,
    taskId: string,
    user: string,
    data: Json,
  ): Promise<{ nodeId: string; iteration: string; attempt: number } | null>;

  /** The given runs that are still stuck, re-checked by a statement that starts after their locks are held. */
  stillStuck(runIds: readonly string[], idleMs: number): Promise<string[]>;
  /**
   * Writes the sweeper's audit of repairs decided in this transaction (before the pass's writes, so each
   * row's last event is the run's last before the repair). Optional: a store without it keeps no audit.
   */
  recordRepairs?(rows: readonly RepairRow[]): Promise<void>;

  /** Creates or replaces a schedule. */
  putSchedule(spec: ScheduleSpec): Promise<ScheduleRecord>;
  deleteSchedule(namespace: string, name: string): Promise<boolean>;
  /** Pauses or resumes a schedule; `nextAt` is the next due time from now when resuming. */
  pauseSchedule(
    namespace: string,
    name: string,
    paused: boolean,
    nextAt: Date | null,
  ): Promise<ScheduleRecord | null>;
  /** Locks a schedule that is due (or holds a buffered start), skipping one another replica holds. */
  lockDueSchedule(namespace: string, name: string): Promise<ScheduleRecord | null>;
  /** Records what became of a due time. */
  recordScheduleFire(fire: ScheduleFire): Promise<void>;
  /** Locks run rows (`FOR UPDATE`, or `SKIP LOCKED` with `skip`) and returns those locked. */
  lockRuns(ids: readonly string[], mode: 'wait' | 'skip'): Promise<LockedRun[]>;

  /** Claims pending decisions: deletes their decide-queue rows and returns the run ids that had one. */
  claimDecisions(runIds: readonly string[]): Promise<string[]>;
  /** Asks for a decision on each run (deduplicated per run; the upsert locks an existing row). */
  requestDecisions(runIds: readonly string[], reason: string, delayMs?: number): Promise<void>;
  /** Records that a decision failed and when to try again. */
  deferDecision(runId: string, error: string, delayMs: number): Promise<void>;

  readInbox(runIds: readonly string[]): Promise<InboxItem[]>;
  appendInbox(items: readonly { runId: string; event: RunEvent }[]): Promise<void>;

  /** Latest attempt of each requested node instance, across runs. */
  loadTasks(keys: readonly StateKey[]): Promise<LoadedTask[]>;
  /** Latest attempt of every node instance of the given runs (for decisions that read the whole run). */
  loadRunTasks(runIds: readonly string[]): Promise<LoadedTask[]>;
  /**
   * Latest attempt of each requested node instance, with its row locked (`FOR UPDATE`) until the
   * transaction ends, so that no lease, report or lease expiry changes it under an operator's action.
   */
  lockTasks(keys: readonly StateKey[]): Promise<LoadedTask[]>;
  /** Moves a locked run to another version, renaming its node ids (attempts first: see invariant 28). */
  moveRun(move: RunMoveWrite): Promise<void>;
  /** Records that a run this transaction inserted was forked from another. */
  recordFork(fork: RunFork): Promise<void>;
  /** Signal mailboxes of runs the caller has locked; a mailbox with nothing in it has no row. */
  loadMailboxes(keys: readonly MailboxStateKey[]): Promise<{ runId: string; mailbox: Mailbox }[]>;

  /**
   * Applies workers' reports, fenced by attempt, lease token and a non-final status: a report lands only
   * while the task is `running` at that attempt, inside its deadline, under the token its lease gave.
   * Anything else (a stale or forged token, a later attempt, a task already finished, timed out or
   * cancelled) is refused with the reason, and changes nothing; of concurrent reports on one lease, one
   * lands. Returns one verdict per report, in order: of two reports on one task in a batch, the one whose
   * attempt and token landed is accepted, the other refused. With `namespace`, reports on tasks of runs in
   * other namespaces are refused too.
   */
  finishTasks(reports: readonly TaskReport[], namespace?: string): Promise<ReportVerdict[]>;
  /** Says why reports on these tasks would be refused, from the tasks as they are now. */
  explainRefusals(
    reports: readonly { runId: string; taskId: string; attempt: number; leaseToken: string }[],
    namespace?: string,
  ): Promise<ReportVerdict[]>;
  /**
   * Leases queued tasks for a worker: removes them from the queue and marks them running, in one step.
   * Tasks under a limit are leased only while the limit has room, counted under the limit's advisory lock;
   * a task refused stays on the queue, free for the next lease.
   *
   * This is the step claim, and the one hard requirement on a store: moving a task from `queued` to
   * `running` with a fresh, unguessable lease token (the fencing token) must be atomic, conditional on
   * the task still being `queued`, and must tell the caller whether it won. A task in `tasks` was won by
   * this caller and no one else; a task it does not contain was not (another claimer got it first, or it
   * was cancelled). Of any number of concurrent claimers of one task, however many queue messages name
   * it, exactly one wins. A read-then-write lets two workers run one attempt. Every later write by the
   * holder (`finishTasks`, `renewLeases`) carries the token, and a stale token is refused.
   */
  leaseTasks(request: LeaseRequest): Promise<LeaseOutcome>;
  /**
   * Leases specific tasks (named by a queue message outside PostgreSQL), with the same claim contract as
   * `leaseTasks`: only a task still `queued` at the named attempt is leased, so a duplicate or stale
   * message leases nothing and one of several concurrent claimers wins. A named task of a capped task
   * type is not leased but moved to the table queue, where the gated path counts it; the types moved come
   * back so that polls waiting for them can be woken.
   */
  leaseTasksById(
    request: LeaseRequest,
    tasks: readonly { runId: string; taskId: string; attempt: number }[],
  ): Promise<{ tasks: LeasedTask[]; moved: { namespace: string; taskType: string }[] }>;
  /** Extends leases; returns the ids that are still held (the rest are refused). */
  renewLeases(
    tasks: readonly { runId: string; taskId: string; attempt: number; leaseToken: string }[],
    leaseMs: number,
    namespace?: string,
  ): Promise<string[]>;
  /** Ends running attempts whose lease or deadline passed (skipping rows others hold). */
  expireLeases(tasks: readonly { runId: string; taskId: string }[]): Promise<ExpiredTask[]>;
  /** Deletes due timers (skipping rows others hold) and returns them. */
  takeTimers(ids: readonly { id: string; runId: string }[]): Promise<{ runId: string; event: RunEvent }[]>;

  /**
   * Claims due outbox rows of one destination for delivery (`FOR UPDATE SKIP LOCKED`): the caller
   * delivers them and settles them in this same transaction, so a crash in between redelivers them.
   */
  claimOutbox(destination: string, limit: number): Promise<OutboxRow[]>;
  /** Marks rows: delivered ones are deleted, failed ones back off, and past the limit become dead letters. */
  settleOutbox(outcomes: readonly OutboxOutcome[], policy: OutboxRetryPolicy): Promise<void>;
  /** Puts dead letters back for delivery, with their attempts reset; returns how many. */
  replayDeadLetters(selection: ReplaySelection): Promise<number>;
  /** Which of these runs exist. */
  existingRuns(ids: readonly string[]): Promise<string[]>;
  /** Which of these attempts are still queued (their task message is still worth sending). */
  queuedTasks(
    tasks: readonly { runId: string; taskId: string; attempt: number }[],
  ): Promise<{ runId: string; taskId: string; attempt: number }[]>;
  /**
   * Locks the given attempts (`FOR SHARE`) and says which are still running, so that starting their
   * children and ending the attempts are serialised: a child is never started for an attempt that was
   * cancelled or timed out, and a cancel that follows a start sees the child to cascade to.
   */
  lockParentTasks(
    attempts: readonly { runId: string; nodeId: string; iteration: string; attempt: number }[],
  ): Promise<{ runId: string; nodeId: string; iteration: string; attempt: number; running: boolean }[]>;
  /**
   * Inserts runs started by nodes, deduplicated on their start keys (a redelivered or replayed start is
   * absorbed); returns the runs inserted now, locked.
   */
  insertChildRuns(runs: readonly NewRun[]): Promise<LockedRun[]>;

  /**
   * Writes everything a pass decided; with `commit`, commits in the same round trip and ends the
   * transaction. Returns the node instances whose insert was absorbed (their runs have already been
   * asked for another decision, in the same statement).
   */
  write(
    writes: WriteSet,
    options?: { readonly commit?: boolean },
  ): Promise<{ absorbed: { runId: string; nodeId: string; iteration: string; attempt: number }[] }>;
}
