import { type Definition, type Json, type RunEvent, WeftError } from '@weft/core';
import {
  type BlobUse,
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
  type RepairRow,
  type ReplaySelection,
  type RunFork,
  type RunMoveWrite,
  type StateKey,
  type StoreTx,
  type TaskReport,
  type WriteSet,
} from '@weft/engine';
import type { Db } from './db.js';
import { referenceBlobs } from './ops/blob-refs.js';
import { existingRuns, insertChildRuns, lockParentTasks } from './ops/child-runs.js';
import * as decideQueue from './ops/decide-queue.js';
import * as definitions from './ops/definitions.js';
import { expireLeases } from './ops/expire-leases.js';
import { explainRefusals, finishTasks } from './ops/finish-tasks.js';
import { recordFork } from './ops/forks.js';
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
import { queuedPriorities } from './ops/queue.js';
import { queuedTasks } from './ops/queued-tasks.js';
import * as quotas from './ops/quotas.js';
import * as runs from './ops/runs.js';
import * as schedules from './ops/schedules.js';
import { stillStuck } from './ops/sweeper.js';
import { recordRepairs } from './ops/sweeper-repairs.js';
import { takeTimers } from './ops/timers.js';
import { applyWriteSet } from './ops/write-set.js';

/** Store operations bound to one transaction. */
export class PgStoreTx implements StoreTx {
  /** Set once COMMIT or ROLLBACK has been sent. */
  ended = false;

  constructor(private readonly conn: Db) {}

  /**
   * The transaction's connection; refused once COMMIT or ROLLBACK has been sent. A statement sent after
   * `write(..., { commit: true })` would run on its own, outside the transaction, and take no part in
   * its locks: refusing it makes such a mistake loud. Test: "refuses operations once a write committed,
   * and keeps what it committed".
   */
  private get tx(): Db {
    if (this.ended)
      throw new WeftError(
        'transaction_ended',
        'this transaction has already ended (a write committed it): open a new one with store.transaction() for more work',
        500,
      );
    return this.conn;
  }

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
    const applying = applyWriteSet(this.tx, writes);
    if (!options.commit) return applying;
    this.ended = true;
    const committing = this.conn`COMMIT`.execute();
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
