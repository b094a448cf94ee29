import { randomUUID } from 'node:crypto';
import type { Definition, Json, RunEvent } from '@weft/core';
import {
  type BlobUse,
  type DeadLetterFilter,
  type IdempotentRun,
  type LeaseOutcome,
  type LeaseRequest,
  type LimitRecord,
  type LoadedTask,
  leaseInRounds,
  type MailboxStateKey,
  type NewRun,
  type OutboxOutcome,
  type OutboxRetryPolicy,
  type RepairFilter,
  type RepairRow,
  type ReplaySelection,
  type RunFork,
  type RunMoveWrite,
  type StateKey,
  type Store,
  type StoreTx,
  type TaskReport,
  type TransactionalStore,
  type TransactionScope,
  type UndispatchedTasks,
  type Wakeup,
  type WorkerSighting,
  type WriteSet,
} from '@weft/engine';
import type { Sql } from 'postgres';
import type { Db } from './db.js';
import { referenceBlobs } from './ops/blob-refs.js';
import { existingRuns, insertChildRuns, lockParentTasks } from './ops/child-runs.js';
import * as decideQueue from './ops/decide-queue.js';
import * as definitions from './ops/definitions.js';
import { endedRuns } from './ops/ended-runs.js';
import { expiredLeases, expireLeases } from './ops/expire-leases.js';
import { explainRefusals, finishTasks } from './ops/finish-tasks.js';
import { forkLinks, recordFork } from './ops/forks.js';
import { readHistory } from './ops/history.js';
import * as human from './ops/human-tasks.js';
import * as idempotency from './ops/idempotency.js';
import { appendInbox, readInbox } from './ops/inbox.js';
import { leaseTasksById } from './ops/lease-by-id.js';
import { leaseGated } from './ops/lease-gated.js';
import { leaseTasks, renewLeases } from './ops/lease-tasks.js';
import * as limits from './ops/limits.js';
import { loadRunTasks, loadTasks, lockTasks } from './ops/load-tasks.js';
import { loadMailboxes } from './ops/mailboxes.js';
import { moveRun } from './ops/move-run.js';
import * as outbox from './ops/outbox.js';
import { outboxBacklog } from './ops/outbox-backlog.js';
import { queuedPriorities } from './ops/queue.js';
import { queuedTasks } from './ops/queued-tasks.js';
import * as quotas from './ops/quotas.js';
import * as runList from './ops/run-list.js';
import * as runs from './ops/runs.js';
import * as schedules from './ops/schedules.js';
import { stillStuck, stuckRuns } from './ops/sweeper.js';
import { checkRepairs, listRepairs, recordRepairs } from './ops/sweeper-repairs.js';
import { dueTimers, takeTimers } from './ops/timers.js';
import { listTriggeredDefinitions } from './ops/triggered-definitions.js';
import { undispatchedTasks } from './ops/undispatched.js';
import * as workers from './ops/workers.js';
import { workload } from './ops/workload.js';
import { applyWriteSet } from './ops/write-set.js';
import { listTasks } from './ops/write-tasks.js';
import { PgBlobDeletions } from './pg-blob-deletions.js';
import { PgRetention } from './pg-retention.js';

const RETRYABLE = new Set(['40001', '40P01']);
const CHANNEL = 'weft_wakeup';

/** The production store: PostgreSQL, through one module per SQL operation. */
export class PgStore implements Store, TransactionalStore, UndispatchedTasks {
  /** Tags this process's notifications so that it ignores its own. */
  readonly origin = randomUUID();
  /** Transactions retried after a deadlock or serialisation failure, by error code. */
  readonly retries: Record<string, number> = {};

  /** Retention: policies, and purges of finished runs. */
  readonly retention: PgRetention;
  readonly blobDeletions: PgBlobDeletions;

  constructor(readonly sql: Sql) {
    this.retention = new PgRetention(sql);
    this.blobDeletions = new PgBlobDeletions(sql);
  }

  /**
   * Runs `fn` in a READ COMMITTED transaction: each statement sees what committed before it started,
   * which the claim-before-read rule relies on. A deadlock or serialisation failure is retried.
   *
   * BEGIN is pipelined with the transaction's first statements, and `write(..., { commit: true })`
   * pipelines COMMIT with the last writes, so a transaction costs no round trip for either. If any
   * pipelined statement fails, PostgreSQL aborts the transaction and turns the COMMIT into a rollback;
   * the statement's error is what the caller sees.
   */
  async transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return this.runInTransaction((scope) => fn(scope.tx));
  }

  /**
   * The transactional-dispatch capability (invariant 7): `transaction` with a handle on it, the reserved
   * connection (a postgres.js `Sql` inside BEGIN … COMMIT), which a dispatcher sharing this database joins
   * (the pg-boss dispatcher runs its insert through it), so a task and its job commit or roll back together.
   */
  async runInTransaction<T>(fn: (scope: TransactionScope) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const conn = await this.sql.reserve();
      const tx = new PgStoreTx(conn);
      try {
        const begin = conn`BEGIN`.execute();
        begin.catch(() => {});
        // Every statement of a transaction looks rows up by key, and a connection keeps the generic plan it
        // made on a statement's first use: made while a table was small, that plan may scan the table and
        // keep scanning it as the table grows, until autovacuum analyses it. So transactions plan without
        // sequential scans (for this transaction only; the driver's catalog query at connect, which needs
        // them, is unaffected). Pipelined with BEGIN: no round trip of its own. Test: "the statements of
        // a step read the rows of their own runs".
        const noScans = conn`SELECT set_config('enable_seqscan', 'off', true)`.execute();
        noScans.catch(() => {});
        const result = await fn({ tx, handle: conn });
        await begin;
        await noScans;
        if (!tx.ended) {
          tx.ended = true;
          await conn`COMMIT`;
        }
        return result;
      } catch (e) {
        if (!tx.ended) {
          tx.ended = true;
          await conn`ROLLBACK`.catch(() => {});
        }
        const code = (e as { code?: string }).code;
        if (!code || !RETRYABLE.has(code) || attempt >= 5) throw e;
        this.retries[code] = (this.retries[code] ?? 0) + 1;
      } finally {
        conn.release();
      }
    }
  }

  getDefinitionById = (id: string) => definitions.getDefinitionById(this.sql, id);
  getDefinition = (namespace: string, name: string, version?: number) =>
    definitions.getDefinition(this.sql, namespace, name, version);
  listDefinitions = (namespace: string) => definitions.listDefinitions(this.sql, namespace);
  listDefinitionVersions = (namespace: string, name: string) =>
    definitions.listDefinitionVersions(this.sql, namespace, name);
  listTriggeredDefinitions = (namespace: string, event: string) =>
    listTriggeredDefinitions(this.sql, namespace, event);
  getRun = (id: string) => runs.getRun(this.sql, id);
  getRuns = (ids: readonly string[]) => runs.getRuns(this.sql, ids);
  listRuns = (filter: Parameters<Store['listRuns']>[0]) => runList.listRuns(this.sql, filter);
  countMatchingRuns = (filter: Parameters<Store['countMatchingRuns']>[0], cap: number) =>
    runList.countMatchingRuns(this.sql, filter, cap);
  listNamespaces = () => definitions.listNamespaces(this.sql);
  outboxBacklog = (namespace: string) => outboxBacklog(this.sql, namespace);
  workload = () => workload(this.sql);
  recordWorkers = (sightings: readonly WorkerSighting[]) => workers.recordWorkers(this.sql, sightings);
  listWorkers = (namespace: string, since: Date) => workers.listWorkers(this.sql, namespace, since);
  countRuns = (namespace: string, ids?: readonly string[]) => runs.countRuns(this.sql, namespace, ids);
  endedRuns = (ids: readonly string[]) => endedRuns(this.sql, ids);
  listTasks = (runId: string) => listTasks(this.sql, runId);
  readHistory = (runId: string, afterSeq: number, limit: number) =>
    readHistory(this.sql, runId, afterSeq, limit);
  forkLinks = (runId: string) => forkLinks(this.sql, runId);
  dueDecisions = (limit: number) => decideQueue.dueDecisions(this.sql, limit);
  dueTimers = (limit: number) => dueTimers(this.sql, limit);
  expiredLeases = (limit: number) => expiredLeases(this.sql, limit);
  getIdempotentRuns = (keys: readonly { namespace: string; key: string }[]) =>
    idempotency.getIdempotentRuns(this.sql, keys);
  listLimits = (namespace?: string) => limits.listLimits(this.sql, namespace);
  limitUsage = (namespace: string) => limits.limitUsage(this.sql, namespace);
  listHumanTasks = (filter: Parameters<Store['listHumanTasks']>[0]) => human.listHumanTasks(this.sql, filter);
  getHumanTask = (taskId: string) => human.getHumanTask(this.sql, taskId);
  stuckRuns = (idleMs: number, limit: number) => stuckRuns(this.sql, idleMs, limit);
  checkRepairs = (afterMs: number, limit: number) => checkRepairs(this.sql, afterMs, limit);
  listRepairs = (filter: RepairFilter) => listRepairs(this.sql, filter);
  tidyInbox = (limit: number) => human.tidyHumanTasks(this.sql, limit);
  listSchedules = (namespace: string) => schedules.listSchedules(this.sql, namespace);
  getSchedule = (namespace: string, name: string) => schedules.getSchedule(this.sql, namespace, name);
  dueSchedules = (limit: number) => schedules.dueSchedules(this.sql, limit);
  outboxDestinations = () => outbox.outboxDestinations(this.sql);
  listDeadLetters = (filter: DeadLetterFilter) => outbox.listDeadLetters(this.sql, filter);
  /** Queued tasks left without a message, for the repair of write-then-enqueue dispatch. */
  undispatchedTasks = (filter: Parameters<UndispatchedTasks['undispatchedTasks']>[0]) =>
    undispatchedTasks(this.sql, filter);

  async now(): Promise<Date> {
    const [row] = await this.sql<{ now: Date }[]>`SELECT now() AS now`.execute();
    return row!.now;
  }

  async notify(wakeups: readonly Wakeup[]): Promise<void> {
    if (wakeups.length === 0) return;
    const payloads = wakeups.map((wakeup) => JSON.stringify({ origin: this.origin, wakeup }));
    await this.sql`SELECT pg_notify(${CHANNEL}, p) FROM unnest(${payloads}::text[]) AS p`.execute();
  }

  async listen(onWakeup: (wakeup: Wakeup) => void): Promise<() => Promise<void>> {
    const { unlisten } = await this.sql.listen(CHANNEL, (payload) => {
      try {
        const { origin, wakeup } = JSON.parse(payload) as { origin: string; wakeup: Wakeup };
        if (origin !== this.origin) onWakeup(wakeup);
      } catch {
        // not ours
      }
    });
    return unlisten;
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 5 });
  }
}

/** Store operations bound to one transaction. */
class PgStoreTx implements StoreTx {
  /** Set once COMMIT or ROLLBACK has been sent. */
  ended = false;

  constructor(private readonly tx: Db) {}

  referenceBlobs(uses: readonly BlobUse[]) {
    return referenceBlobs(this.tx, uses);
  }
  deployDefinition(namespace: string, name: string, hash: string, source: string, definition: Definition) {
    return definitions.deployDefinition(this.tx, namespace, name, hash, source, definition);
  }
  getDefinitionById(id: string) {
    return definitions.getDefinitionById(this.tx, id);
  }
  insertRuns(rows: readonly NewRun[]) {
    return runs.insertRuns(this.tx, rows);
  }
  lockRuns(ids: readonly string[], mode: 'wait' | 'skip') {
    return runs.lockRuns(this.tx, ids, mode);
  }
  claimDecisions(runIds: readonly string[]) {
    return decideQueue.claimDecisions(this.tx, runIds);
  }
  requestDecisions(runIds: readonly string[], reason: string, delayMs?: number) {
    return decideQueue.requestDecisions(this.tx, runIds, reason, delayMs);
  }
  deferDecision(runId: string, error: string, delayMs: number) {
    return decideQueue.deferDecision(this.tx, runId, error, delayMs);
  }
  readInbox(runIds: readonly string[]) {
    return readInbox(this.tx, runIds);
  }
  appendInbox(items: readonly { runId: string; event: RunEvent }[]) {
    return appendInbox(this.tx, items);
  }
  loadTasks(keys: readonly StateKey[]): Promise<LoadedTask[]> {
    return loadTasks(this.tx, keys);
  }
  loadRunTasks(runIds: readonly string[]): Promise<LoadedTask[]> {
    return loadRunTasks(this.tx, runIds);
  }
  lockTasks(keys: readonly StateKey[]): Promise<LoadedTask[]> {
    return lockTasks(this.tx, keys);
  }
  moveRun(move: RunMoveWrite): Promise<void> {
    return moveRun(this.tx, move);
  }
  recordFork(fork: RunFork): Promise<void> {
    return recordFork(this.tx, fork);
  }
  loadMailboxes(keys: readonly MailboxStateKey[]) {
    return loadMailboxes(this.tx, keys);
  }
  finishTasks(reports: readonly TaskReport[], namespace?: string) {
    return finishTasks(this.tx, reports, namespace);
  }
  async explainRefusals(
    reports: readonly { runId: string; taskId: string; attempt: number; leaseToken: string }[],
    namespace?: string,
  ) {
    return [...(await explainRefusals(this.tx, reports, namespace)).values()];
  }
  leaseTasks(request: LeaseRequest): Promise<LeaseOutcome> {
    // Rows whose task was cancelled are deleted and leased nothing: the loop keeps taking until the queue
    // is empty for these types or the request is filled, then leases what waits under limits through the
    // gated path, which counts each limit.
    return leaseInRounds(request, {
      fast: (r) => leaseTasks(this.tx, r),
      gated: (r) => leaseGated(this.tx, r),
    });
  }
  latestDefinitionVersions(names: readonly { namespace: string; name: string }[]) {
    return definitions.latestDefinitionVersions(this.tx, names);
  }
  leaseFastRound(request: LeaseRequest) {
    return leaseTasks(this.tx, request);
  }
  claimIdempotencyKeys(rows: readonly IdempotentRun[]) {
    return idempotency.claimIdempotencyKeys(this.tx, rows);
  }
  releaseIdempotencyKeys(keys: readonly { namespace: string; key: string }[]) {
    return idempotency.releaseIdempotencyKeys(this.tx, keys);
  }
  lockQuotas(namespaces: readonly string[]) {
    return quotas.lockQuotas(this.tx, namespaces);
  }
  quotaUsage(namespaces: readonly string[]) {
    return quotas.quotaUsage(this.tx, namespaces);
  }
  setLimits(rows: readonly LimitRecord[]) {
    return limits.setLimits(this.tx, rows);
  }
  deleteLimit(namespace: string, kind: LimitRecord['kind'], name: string) {
    return limits.deleteLimit(this.tx, namespace, kind, name);
  }
  queuedPriorities(namespace: string, taskTypes: readonly string[]) {
    return queuedPriorities(this.tx, namespace, taskTypes);
  }
  claimHumanTask(namespace: string, taskId: string, user: string) {
    return human.claimHumanTask(this.tx, namespace, taskId, user);
  }
  releaseHumanTask(namespace: string, taskId: string, user: string) {
    return human.releaseHumanTask(this.tx, namespace, taskId, user);
  }
  completeHumanTask(namespace: string, taskId: string, user: string, data: Json) {
    return human.completeHumanTask(this.tx, namespace, taskId, user, data);
  }
  stillStuck(runIds: readonly string[], idleMs: number) {
    return stillStuck(this.tx, runIds, idleMs);
  }
  recordRepairs(rows: readonly RepairRow[]) {
    return recordRepairs(this.tx, rows);
  }
  putSchedule(spec: Parameters<StoreTx['putSchedule']>[0]) {
    return schedules.putSchedule(this.tx, spec);
  }
  deleteSchedule(namespace: string, name: string) {
    return schedules.deleteSchedule(this.tx, namespace, name);
  }
  pauseSchedule(namespace: string, name: string, paused: boolean, nextAt: Date | null) {
    return schedules.pauseSchedule(this.tx, namespace, name, paused, nextAt);
  }
  lockDueSchedule(namespace: string, name: string) {
    return schedules.lockDueSchedule(this.tx, namespace, name);
  }
  recordScheduleFire(fire: Parameters<StoreTx['recordScheduleFire']>[0]) {
    return schedules.recordScheduleFire(this.tx, fire);
  }
  leaseTasksById(
    request: LeaseRequest,
    tasks: readonly { runId: string; taskId: string; attempt: number }[],
  ) {
    return leaseTasksById(this.tx, request, tasks);
  }
  renewLeases(
    tasks: readonly { runId: string; taskId: string; attempt: number; leaseToken: string }[],
    leaseMs: number,
    namespace?: string,
  ) {
    return renewLeases(this.tx, tasks, leaseMs, namespace);
  }
  expireLeases(tasks: readonly { runId: string; taskId: string }[]) {
    return expireLeases(this.tx, tasks);
  }
  takeTimers(ids: readonly { id: string; runId: string }[]) {
    return takeTimers(this.tx, ids);
  }
  async write(writes: WriteSet, options: { commit?: boolean } = {}) {
    if (this.ended) throw new Error('this transaction has already ended');
    const applying = applyWriteSet(this.tx, writes);
    if (!options.commit) return applying;
    this.ended = true;
    const committing = this.tx`COMMIT`.execute();
    const [result] = await Promise.all([applying, committing]);
    return result;
  }
  claimOutbox(destination: string, limit: number) {
    return outbox.claimOutbox(this.tx, destination, limit);
  }
  settleOutbox(outcomes: readonly OutboxOutcome[], policy: OutboxRetryPolicy) {
    return outbox.settleOutbox(this.tx, outcomes, policy);
  }
  replayDeadLetters(selection: ReplaySelection) {
    return outbox.replayDeadLetters(this.tx, selection);
  }
  existingRuns(ids: readonly string[]) {
    return existingRuns(this.tx, ids);
  }
  queuedTasks(tasks: readonly { runId: string; taskId: string; attempt: number }[]) {
    return queuedTasks(this.tx, tasks);
  }
  lockParentTasks(
    attempts: readonly { runId: string; nodeId: string; iteration: string; attempt: number }[],
  ) {
    return lockParentTasks(this.tx, attempts);
  }
  insertChildRuns(rows: readonly NewRun[]) {
    return insertChildRuns(this.tx, rows);
  }
}
