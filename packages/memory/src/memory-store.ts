import { AsyncLocalStorage } from 'node:async_hooks';
import { isTerminalRun, WeftError } from '@weft/core';
import type {
  DeadLetterFilter,
  Store,
  StoreTx,
  TransactionalStore,
  TransactionScope,
  UndispatchedTasks,
  Wakeup,
  WorkerSighting,
} from '@weft/engine';
import * as admin from './admin.js';
import { byText, definitionRecord, type Op, runRecord, taskRecord } from './convert.js';
import * as decisions from './decisions.js';
import * as human from './human.js';
import { LockTable, Mutex, TxScope } from './locks.js';
import { MemoryTx } from './memory-tx.js';
import * as reads from './operator-reads.js';
import * as outbox from './outbox.js';
import { dec, key, MemoryState } from './state.js';
import * as sweeps from './sweeps.js';
import { transactionHandle } from './transaction-handle.js';
import * as undispatched from './undispatched.js';

/** What a MemoryStore is built with. */
export interface MemoryStoreOptions {
  /** Where `now()` and every transaction's time come from (the system clock by default). */
  readonly clock?: { now(): Date };
}

/**
 * A complete store in the memory of one process: for tests and embedded use, with the semantics of the
 * Postgres store (leases and fencing tokens, report verdicts, the decide queue and inbox, timers, lease
 * expiry, history sequence, idempotency keys, limits, human tasks, schedules, the outbox and child runs)
 * and none of its durability: everything is gone when the process ends.
 *
 * Transactions run one at a time, in arrival order, behind an async mutex: whatever one reads and writes,
 * no other transaction interleaves, which is stronger than the row locks and advisory locks of the
 * Postgres store. Every change is journaled, and a transaction whose callback throws is undone entirely.
 * A transaction started from inside another one's callback (as code on PostgreSQL would open a second
 * connection) runs at once, as its own transaction, and row locks the enclosing one holds are honoured:
 * `skip` passes them over. Reads outside a transaction see the latest changes, including those of a
 * transaction still running.
 */
export class MemoryStore implements Store, TransactionalStore, UndispatchedTasks {
  private readonly s = new MemoryState();
  private readonly locks = new LockTable();
  private readonly mutex = new Mutex();
  private readonly current = new AsyncLocalStorage<TxScope>();
  private readonly listeners = new Set<(wakeup: Wakeup) => void>();
  private readonly clock: { now(): Date };
  private readonly workers = new Map<string, WorkerSighting>();

  constructor(options: MemoryStoreOptions = {}) {
    if (options.clock !== undefined && typeof options.clock?.now !== 'function')
      throw new WeftError(
        'bad_option',
        'MemoryStore: `clock` must be an object with a now() method that returns a Date',
      );
    this.clock = options.clock ?? { now: () => new Date() };
  }

  async transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return this.runInTransaction((scope) => fn(scope.tx));
  }

  /**
   * The transactional-dispatch capability: `transaction` with a handle (`MemoryTransactionHandle`) whose
   * `afterCommit` effects run when the transaction commits and are dropped when it rolls back. An
   * in-process queue that joins with it shows a message exactly when its tasks commit (test: "dispatcher
   * conformance: list (joins the transaction) on MemoryStore").
   */
  async runInTransaction<T>(fn: (scope: TransactionScope) => Promise<T>): Promise<T> {
    // One at a time (tests: "run one at a time: a second transaction starts after the first ends", and the
    // conformance races such as "of several concurrent claimers of one task exactly one wins"); one opened
    // inside another runs at once, its locks honoured (test: "a transaction opened inside another runs at
    // once; the outer one’s run locks still count").
    const enclosing = this.current.getStore();
    const release = enclosing && !enclosing.ended ? null : await this.mutex.acquire();
    const scope = new TxScope(this.clock.now());
    try {
      const tx = new MemoryTx(this.s, scope, this.locks);
      const result = await this.current.run(scope, () => fn({ tx, handle: transactionHandle(scope) }));
      scope.journal?.commit();
      return result;
    } catch (e) {
      scope.journal?.rollback();
      throw e;
    } finally {
      scope.ended = true;
      scope.journal = null;
      this.locks.release(scope);
      release?.();
    }
  }

  /** An operation context outside any transaction: nothing to undo, the clock's time. */
  private read(): Op {
    const scope = new TxScope(this.clock.now());
    scope.journal = null;
    return { s: this.s, tx: scope, locks: this.locks };
  }

  async getDefinitionById(id: string) {
    const d = this.s.definitions.get(id);
    return d ? definitionRecord(d) : null;
  }

  async getDefinition(namespace: string, name: string, version?: number) {
    const { all, latest } = this.s.definitionVersions(namespace, name);
    const d = version === undefined ? latest : all.find((x) => x.version === version);
    return d ? definitionRecord(d) : null;
  }

  async listDefinitions(namespace: string) {
    const byName = new Map<
      string,
      { name: string; latestVersion: number; versions: number; updatedAt: Date }
    >();
    for (const d of this.s.definitions.values()) {
      if (d.namespace !== namespace) continue;
      const e = byName.get(d.name);
      if (!e)
        byName.set(d.name, { name: d.name, latestVersion: d.version, versions: 1, updatedAt: d.createdAt });
      else {
        e.latestVersion = Math.max(e.latestVersion, d.version);
        e.versions++;
        if (d.createdAt > e.updatedAt) e.updatedAt = d.createdAt;
      }
    }
    return [...byName.values()].sort((a, b) => byText(a.name, b.name));
  }

  async listDefinitionVersions(namespace: string, name: string) {
    return this.s.definitions
      .pick(this.s.definitionsByName.keys(key(namespace, name)))
      .sort((a, b) => b.version - a.version)
      .map(definitionRecord);
  }

  async listTriggeredDefinitions(namespace: string, event: string) {
    type Row = Parameters<typeof definitionRecord>[0];
    const latest = new Map<string, Row>();
    for (const d of this.s.definitions.values()) {
      if (d.namespace !== namespace) continue;
      const seen = latest.get(d.name);
      if (!seen || d.version > seen.version) latest.set(d.name, d);
    }
    return [...latest.values()]
      .map(definitionRecord)
      .filter((d) => d.definition.triggers?.some((t) => t.event === event))
      .sort((a, b) => byText(a.name, b.name));
  }

  async getRun(id: string) {
    const r = this.s.runs.get(id);
    return r ? runRecord(r) : null;
  }

  async getRuns(ids: readonly string[]) {
    return this.s.runs.pick(new Set(ids)).map(runRecord);
  }

  async listRuns(filter: Parameters<Store['listRuns']>[0]) {
    return reads.listRuns(this.read(), filter);
  }

  async countMatchingRuns(filter: Parameters<Store['countMatchingRuns']>[0], cap: number) {
    return reads.countMatchingRuns(this.read(), filter, cap);
  }

  async listNamespaces() {
    return reads.listNamespaces(this.read());
  }

  async outboxBacklog(namespace: string) {
    return reads.outboxBacklog(this.read(), namespace);
  }

  async recordWorkers(sightings: readonly WorkerSighting[]) {
    reads.recordWorkers(this.workers, sightings);
  }

  async listWorkers(namespace: string, since: Date) {
    return reads.listWorkers(this.workers, namespace, since);
  }

  async countRuns(namespace: string, ids?: readonly string[]) {
    const counts: Record<string, number> = {};
    const rows = ids
      ? this.s.runs.pick(new Set(ids))
      : [...this.s.runs.values()].filter((r) => r.namespace === namespace);
    for (const r of rows) counts[r.status] = (counts[r.status] ?? 0) + 1;
    return counts;
  }

  async endedRuns(ids: readonly string[]) {
    return this.s.runs
      .pick(new Set(ids))
      .filter((r) => isTerminalRun(r.status))
      .map((r) => r.id);
  }

  async listTasks(runId: string) {
    return this.s.tasks
      .pick(this.s.tasksByRun.keys(runId))
      .sort(
        (a, b) =>
          a.createdAt.getTime() - b.createdAt.getTime() ||
          byText(a.nodeId, b.nodeId) ||
          byText(a.iteration, b.iteration) ||
          a.attempt - b.attempt,
      )
      .map(taskRecord);
  }

  async forkLinks(runId: string) {
    const from = this.s.forks.get(runId);
    const forks = [...this.s.forksBySource.keys(runId)].sort().slice(0, 1000);
    return { forkedFrom: from?.forkedFrom ?? null, upToNode: from?.upToNode ?? null, forks };
  }

  async readHistory(runId: string, afterSeq: number, limit: number) {
    const events = this.s.history.get(runId) ?? [];
    return events
      .filter((e) => e.seq > afterSeq)
      .slice(0, limit)
      .map((e) => ({
        runId,
        seq: e.seq,
        type: e.type,
        nodeId: e.nodeId,
        iteration: e.iteration,
        attempt: e.attempt,
        data: dec(e.data),
        at: e.at,
      }));
  }

  async dueDecisions(limit: number) {
    return decisions.dueDecisions(this.read(), limit);
  }
  async dueTimers(limit: number) {
    return decisions.dueTimers(this.read(), limit);
  }
  async expiredLeases(limit: number) {
    return sweeps.expiredLeases(this.read(), limit);
  }
  async outboxDestinations() {
    return outbox.outboxDestinations(this.read());
  }
  async listDeadLetters(filter: DeadLetterFilter) {
    return outbox.listDeadLetters(this.read(), filter);
  }
  async now() {
    return this.clock.now();
  }

  async getIdempotentRuns(keys: readonly { namespace: string; key: string }[]) {
    return this.s.idempotencyKeys.pick(keys.map((k) => key(k.namespace, k.key))).map((r) => ({ ...r }));
  }
  async listLimits(namespace?: string) {
    return admin.listLimits(this.read(), namespace);
  }
  async limitUsage(namespace: string) {
    return admin.limitUsage(this.read(), namespace);
  }
  async listHumanTasks(filter: Parameters<Store['listHumanTasks']>[0]) {
    return human.listHumanTasks(this.read(), filter);
  }
  async getHumanTask(taskId: string) {
    return human.getHumanTask(this.read(), taskId);
  }
  async stuckRuns(idleMs: number, limit: number) {
    return sweeps.stuckRuns(this.read(), idleMs, limit);
  }
  /**
   * The repair capability a dispatcher that enqueues after commit needs (queued attempts left without a
   * message). It waits its turn behind running transactions, so it sees only committed work: a task whose
   * transaction is still open is not reported (its enqueue is still to come) (test: "MemoryStore lists
   * queued tasks left without a message").
   */
  undispatchedTasks = (filter: Parameters<UndispatchedTasks['undispatchedTasks']>[0]) =>
    this.transaction(async () => undispatched.undispatchedTasks(this.read(), filter));
  /** Rows on the table queue (wake-ups for queued tasks, due or held back), for tests and health checks. */
  async queueDepth(): Promise<number> {
    return this.s.queue.size;
  }
  /** Housekeeping of the inbox; a write, so it runs as a transaction of its own. */
  async tidyInbox(limit: number) {
    return this.transaction(async (tx) => (tx as MemoryTx).tidyInbox(limit));
  }
  async listSchedules(namespace: string) {
    return admin.listSchedules(this.read(), namespace);
  }
  async getSchedule(namespace: string, name: string) {
    return admin.getSchedule(this.read(), namespace, name);
  }
  async dueSchedules(limit: number) {
    return admin.dueSchedules(this.read(), limit);
  }

  /** Delivers wake-ups to every listener of this store (after the current call stack: they are hints). */
  async notify(wakeups: readonly Wakeup[]): Promise<void> {
    if (wakeups.length === 0 || this.listeners.size === 0) return;
    const listeners = [...this.listeners];
    setImmediate(() => {
      for (const wakeup of wakeups)
        for (const fn of listeners) {
          try {
            fn(wakeup);
          } catch {
            // A listener's failure is its own; a wake-up is only a hint.
          }
        }
    });
  }

  async listen(onWakeup: (wakeup: Wakeup) => void): Promise<() => Promise<void>> {
    this.listeners.add(onWakeup);
    return async () => {
      this.listeners.delete(onWakeup);
    };
  }

  /** Stops delivering wake-ups; the data stays readable. */
  async close(): Promise<void> {
    this.listeners.clear();
  }
}
