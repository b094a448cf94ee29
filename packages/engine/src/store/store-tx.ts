import type { Definition, Json, Mailbox, RunEvent } from '@weft/core';
import type { BlobUse } from './blob-deletion-records.js';
import type { RunFork } from './fork-records.js';
import type { HumanTaskRecord } from './human-records.js';
import type { LimitRecord } from './limit-records.js';
import type { RunMoveWrite } from './move-records.js';
import type { OutboxOutcome, OutboxRetryPolicy, OutboxRow, ReplaySelection } from './outbox-records.js';
import type {
  DefinitionRecord,
  InboxItem,
  LeasedTask,
  LockedRun,
  ReportVerdict,
  TaskReport,
} from './records.js';
import type { RepairRow } from './repair-records.js';
import type { ScheduleFire, ScheduleRecord, ScheduleSpec } from './schedule-records.js';
import type {
  ExpiredTask,
  FastLease,
  IdempotentRun,
  LeaseOutcome,
  LeaseRequest,
  LoadedTask,
  MailboxStateKey,
  NewRun,
  StateKey,
} from './store-types.js';
import type { WriteSet } from './write-set.js';

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
   * The latest version of each named definition, or null where none is deployed. A start that took a
   * name's latest version from the engine's memory checks it here, in its transaction, before it commits.
   */
  latestDefinitionVersions(
    names: readonly { namespace: string; name: string }[],
  ): Promise<{ namespace: string; name: string; version: number | null }[]>;
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
   * One round of `leaseTasks`'s fast path, as one statement: queued tasks under no limit, best first, with
   * the same claim contract; nothing, and `gated`, when rows under a limit wait for these types. A report
   * sends it ahead of its writes and the COMMIT pipelined after them, so it must be a single statement:
   * whatever a store sent after it would run outside the transaction (test: "never lets a report and a
   * poll both take the one permit").
   */
  leaseFastRound(request: LeaseRequest): Promise<FastLease>;
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
   * transaction: every later operation on this StoreTx is refused (`transaction_ended`). Returns the node
   * instances whose insert was absorbed (their runs have already been asked for another decision, in the
   * same statement).
   */
  write(
    writes: WriteSet,
    options?: { readonly commit?: boolean },
  ): Promise<{ absorbed: { runId: string; nodeId: string; iteration: string; attempt: number }[] }>;
}
