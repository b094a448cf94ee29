import { randomUUID } from 'node:crypto';
import type {
  DeadLetterFilter,
  RepairFilter,
  Store,
  StoreTx,
  TransactionalStore,
  TransactionScope,
  UndispatchedTasks,
  Wakeup,
  WorkerSighting,
} from '@weft/engine';
import type { Sql } from 'postgres';
import * as decideQueue from './ops/decide-queue.js';
import * as definitions from './ops/definitions.js';
import { endedRuns } from './ops/ended-runs.js';
import { expiredLeases } from './ops/expire-leases.js';
import { forkLinks } from './ops/forks.js';
import { readHistory } from './ops/history.js';
import * as human from './ops/human-tasks.js';
import * as idempotency from './ops/idempotency.js';
import * as limits from './ops/limits.js';
import * as outbox from './ops/outbox.js';
import { outboxBacklog } from './ops/outbox-backlog.js';
import * as runList from './ops/run-list.js';
import * as runs from './ops/runs.js';
import * as schedules from './ops/schedules.js';
import { stuckRuns } from './ops/sweeper.js';
import { checkRepairs, listRepairs } from './ops/sweeper-repairs.js';
import { dueTimers } from './ops/timers.js';
import { listTriggeredDefinitions } from './ops/triggered-definitions.js';
import { undispatchedTasks } from './ops/undispatched.js';
import * as workers from './ops/workers.js';
import { workload } from './ops/workload.js';
import { listTasks } from './ops/write-tasks.js';
import { PgBlobDeletions } from './pg-blob-deletions.js';
import { PgRetention } from './pg-retention.js';
import { PgStoreTx } from './pg-store-tx.js';

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
