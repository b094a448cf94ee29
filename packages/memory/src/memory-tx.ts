import { type Definition, type Json, type RunEvent, WeftError } from '@weft/core';
import type {
  IdempotentRun,
  LeaseRequest,
  LimitRecord,
  MailboxStateKey,
  NewRun,
  OutboxOutcome,
  OutboxRetryPolicy,
  ReplaySelection,
  RunFork,
  RunMoveWrite,
  ScheduleFire,
  ScheduleSpec,
  StateKey,
  StoreTx,
  TaskReport,
  WriteSet,
} from '@weft/engine';
import * as admin from './admin.js';
import { definitionRecord, type Op } from './convert.js';
import * as decisions from './decisions.js';
import * as human from './human.js';
import { leaseTasksById } from './lease-by-id.js';
import { leaseFast, leaseTasks, renewLeases } from './lease-tasks.js';
import type { LockTable, TxScope } from './locks.js';
import { moveRun } from './move-run.js';
import * as outbox from './outbox.js';
import { queuedPriorities, queuedTasks } from './queue.js';
import * as runs from './runs.js';
import type { MemoryState } from './state.js';
import * as sweeps from './sweeps.js';
import * as tasks from './tasks.js';
import { applyWriteSet } from './write-set.js';

/**
 * The operations of one in-memory transaction. Every change goes through the transaction's journal, so
 * a rollback undoes all of it; after `write(..., { commit: true })` the changes are final.
 */
export class MemoryTx implements StoreTx {
  private readonly ctx: Op;
  /** Set by `write(..., { commit: true })`. */
  private committed = false;

  constructor(s: MemoryState, tx: TxScope, locks: LockTable) {
    this.ctx = { s, tx, locks };
  }

  /**
   * The operation context; refused once the transaction has ended or a write committed it (as the
   * PostgreSQL store refuses statements after its COMMIT). Test: "refuses operations once a write
   * committed, and keeps what it committed".
   */
  private get op(): Op {
    if (this.ctx.tx.ended || this.committed)
      throw new WeftError(
        'transaction_ended',
        'this transaction has already ended (a write committed it): open a new one with store.transaction() for more work',
        500,
      );
    return this.ctx;
  }

  async deployDefinition(
    namespace: string,
    name: string,
    hash: string,
    source: string,
    definition: Definition,
  ) {
    return runs.deployDefinition(this.op, namespace, name, hash, source, definition);
  }
  async getDefinitionById(id: string) {
    const d = this.op.s.definitions.get(id);
    return d ? definitionRecord(d) : null;
  }
  async insertRuns(rows: readonly NewRun[]) {
    return runs.insertRuns(this.op, rows);
  }
  async claimIdempotencyKeys(rows: readonly IdempotentRun[]) {
    return runs.claimIdempotencyKeys(this.op, rows);
  }
  async releaseIdempotencyKeys(keys: readonly { namespace: string; key: string }[]) {
    runs.releaseIdempotencyKeys(this.op, keys);
  }
  /** Transactions run one at a time: counting running runs and inserting cannot interleave. */
  async lockQuotas(_namespaces: readonly string[]) {
    this.op;
  }
  async quotaUsage(namespaces: readonly string[]) {
    return runs.quotaUsage(this.op, namespaces);
  }
  async setLimits(rows: readonly LimitRecord[]) {
    admin.setLimits(this.op, rows);
  }
  async deleteLimit(namespace: string, kind: LimitRecord['kind'], name: string) {
    return admin.deleteLimit(this.op, namespace, kind, name);
  }
  async queuedPriorities(namespace: string, taskTypes: readonly string[]) {
    return queuedPriorities(this.op, namespace, taskTypes);
  }
  async claimHumanTask(namespace: string, taskId: string, user: string) {
    return human.claimHumanTask(this.op, namespace, taskId, user);
  }
  async releaseHumanTask(namespace: string, taskId: string, user: string) {
    return human.releaseHumanTask(this.op, namespace, taskId, user);
  }
  async completeHumanTask(namespace: string, taskId: string, user: string, data: Json) {
    return human.completeHumanTask(this.op, namespace, taskId, user, data);
  }
  async stillStuck(runIds: readonly string[], idleMs: number) {
    return sweeps.stillStuck(this.op, runIds, idleMs);
  }
  async putSchedule(spec: ScheduleSpec) {
    return admin.putSchedule(this.op, spec);
  }
  async deleteSchedule(namespace: string, name: string) {
    return admin.deleteSchedule(this.op, namespace, name);
  }
  async pauseSchedule(namespace: string, name: string, paused: boolean, nextAt: Date | null) {
    return admin.pauseSchedule(this.op, namespace, name, paused, nextAt);
  }
  async lockDueSchedule(namespace: string, name: string) {
    return admin.lockDueSchedule(this.op, namespace, name);
  }
  async recordScheduleFire(fire: ScheduleFire) {
    admin.recordScheduleFire(this.op, fire);
  }
  async lockRuns(ids: readonly string[], mode: 'wait' | 'skip') {
    return runs.lockRuns(this.op, ids, mode);
  }
  async claimDecisions(runIds: readonly string[]) {
    return decisions.claimDecisions(this.op, runIds);
  }
  async requestDecisions(runIds: readonly string[], reason: string, delayMs?: number) {
    decisions.requestDecisions(this.op, runIds, reason, delayMs);
  }
  async deferDecision(runId: string, error: string, delayMs: number) {
    decisions.deferDecision(this.op, runId, error, delayMs);
  }
  async readInbox(runIds: readonly string[]) {
    return decisions.readInbox(this.op, runIds);
  }
  async appendInbox(items: readonly { runId: string; event: RunEvent }[]) {
    decisions.appendInbox(this.op, items);
  }
  async loadTasks(keys: readonly StateKey[]) {
    return tasks.loadTasks(this.op, keys);
  }
  async loadRunTasks(runIds: readonly string[]) {
    return tasks.loadRunTasks(this.op, runIds);
  }
  async lockTasks(keys: readonly StateKey[]) {
    return tasks.lockTasks(this.op, keys);
  }
  async moveRun(move: RunMoveWrite) {
    moveRun(this.op, move);
  }
  async recordFork(fork: RunFork) {
    this.op.s.forks.set(this.op.tx.journal, fork.runId, fork);
  }
  async loadMailboxes(keys: readonly MailboxStateKey[]) {
    return decisions.loadMailboxes(this.op, keys);
  }
  async finishTasks(reports: readonly TaskReport[], namespace?: string) {
    return tasks.finishTasks(this.op, reports, namespace);
  }
  async explainRefusals(
    reports: readonly { runId: string; taskId: string; attempt: number; leaseToken: string }[],
    namespace?: string,
  ) {
    return tasks.explainRefusals(this.op, reports, namespace);
  }
  async leaseTasks(request: LeaseRequest) {
    return leaseTasks(this.op, request);
  }
  async latestDefinitionVersions(names: readonly { namespace: string; name: string }[]) {
    return runs.latestDefinitionVersions(this.op, names);
  }
  async leaseFastRound(request: LeaseRequest) {
    return leaseFast(this.op, request);
  }
  async leaseTasksById(
    request: LeaseRequest,
    named: readonly { runId: string; taskId: string; attempt: number }[],
  ) {
    return leaseTasksById(this.op, request, named);
  }
  async renewLeases(
    held: readonly { runId: string; taskId: string; attempt: number; leaseToken: string }[],
    leaseMs: number,
    namespace?: string,
  ) {
    return renewLeases(this.op, held, leaseMs, namespace);
  }
  async expireLeases(expired: readonly { runId: string; taskId: string }[]) {
    return sweeps.expireLeases(this.op, expired);
  }
  async takeTimers(ids: readonly { id: string; runId: string }[]) {
    return decisions.takeTimers(this.op, ids);
  }
  async claimOutbox(destination: string, limit: number) {
    return outbox.claimOutbox(this.op, destination, limit);
  }
  async settleOutbox(outcomes: readonly OutboxOutcome[], policy: OutboxRetryPolicy) {
    outbox.settleOutbox(this.op, outcomes, policy);
  }
  async replayDeadLetters(selection: ReplaySelection) {
    return outbox.replayDeadLetters(this.op, selection);
  }
  async existingRuns(ids: readonly string[]) {
    const op = this.op;
    return [...new Set(ids)].filter((id) => op.s.runs.has(id));
  }
  async queuedTasks(queued: readonly { runId: string; taskId: string; attempt: number }[]) {
    return queuedTasks(this.op, queued);
  }
  async lockParentTasks(
    attempts: readonly { runId: string; nodeId: string; iteration: string; attempt: number }[],
  ) {
    return sweeps.lockParentTasks(this.op, attempts);
  }
  /** Marks inbox rows whose attempt ended without an answer (for MemoryStore.tidyInbox). */
  async tidyInbox(limit: number) {
    return human.tidyHumanTasks(this.op, limit);
  }
  async insertChildRuns(rows: readonly NewRun[]) {
    return runs.insertChildRuns(this.op, rows);
  }

  /**
   * Writes a pass's changes. With `commit`, the transaction's changes become final here, as a COMMIT
   * would make them: a later error in the caller no longer undoes them. A write that fails part way
   * undoes everything the transaction did, as a failed statement aborts a PostgreSQL transaction.
   */
  async write(writes: WriteSet, options: { readonly commit?: boolean } = {}) {
    const op = this.op;
    if (!options.commit) return applyWriteSet(op, writes);
    this.committed = true;
    try {
      const result = applyWriteSet(op, writes);
      op.tx.journal?.commit();
      return result;
    } catch (e) {
      op.tx.journal?.rollback();
      throw e;
    } finally {
      op.tx.journal = null;
    }
  }
}
