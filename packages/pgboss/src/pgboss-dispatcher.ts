import type { DispatchTask, QueueDispatcher } from '@weft/engine';
import type PgBoss from 'pg-boss';
import { joinedDb } from './joined-db.js';
import { queueName } from './queue-names.js';

/** A job's data: the attempt it announces (a wake-up, never the truth: the lease by id checks the task). */
export interface TaskJob {
  readonly taskId: string;
  readonly runId: string;
  readonly attempt: number;
  readonly namespace: string;
  readonly taskType: string;
  readonly priority: number;
}

/** How the pg-boss dispatcher is set up. */
export interface PgBossDispatcherOptions {
  /** A started pg-boss instance. */
  readonly boss: PgBoss;
  /** Prefix of the queue names (`<prefix>.<namespace>.<task type>`); `weft` by default. */
  readonly queuePrefix?: string;
  /**
   * Offer `enqueueIn` (default true): jobs are inserted through the store's transaction. Only when pg-boss
   * and the Weft store use the same database; with a separate database, set false and the engine enqueues
   * after commit (and repairs the window).
   */
  readonly shareTransactions?: boolean;
  /** Times pg-boss retries a job whose consumer failed before acknowledging it (not the step's retries). */
  readonly jobRetryLimit?: number;
}

/**
 * A Weft dispatcher on pg-boss. With the store on the same PostgreSQL it joins the store's transaction
 * (transactional dispatch; invariant 7): the task row and its job commit together, and a rollback leaves no
 * job. A task's not-before time becomes the job's `startAfter`, so a retry's backoff is held back by pg-boss.
 * Queues are created on first use.
 */
export class PgBossDispatcher implements QueueDispatcher {
  readonly kind = 'queue' as const;
  readonly name = 'pgboss';
  readonly enqueueIn?: (handle: unknown, tasks: readonly DispatchTask[]) => Promise<void>;
  private readonly boss: PgBoss;
  private readonly prefix: string;
  private readonly retryLimit: number;
  private readonly queues = new Map<string, Promise<void>>();

  constructor(options: PgBossDispatcherOptions) {
    this.boss = options.boss;
    this.prefix = options.queuePrefix ?? 'weft';
    this.retryLimit = options.jobRetryLimit ?? 20;
    if (options.shareTransactions !== false)
      this.enqueueIn = async (handle, tasks) => {
        if (tasks.length === 0) return;
        // Queue creation is DDL on pg-boss's own connection: done before the insert, at most once per queue.
        await this.prepare(tasks);
        await this.insert(tasks, joinedDb(handle));
      };
  }

  /** Sends jobs after commit (and for the engine's repair and redeliveries). */
  async enqueue(tasks: readonly DispatchTask[]): Promise<void> {
    if (tasks.length === 0) return;
    await this.prepare(tasks);
    await this.insert(tasks, null);
  }

  /** The queue a task type's jobs go to. */
  queueOf(namespace: string, taskType: string): string {
    return queueName(this.prefix, namespace, taskType);
  }

  /** Creates the queues of these tasks' types, once each (call it at boot to keep DDL off the hot path). */
  async prepare(tasks: readonly Pick<DispatchTask, 'namespace' | 'taskType'>[]): Promise<void> {
    const names = [...new Set(tasks.map((t) => this.queueOf(t.namespace, t.taskType)))];
    await Promise.all(names.map((name) => this.ensureQueue(name)));
  }

  private ensureQueue(name: string): Promise<void> {
    let ready = this.queues.get(name);
    if (!ready) {
      ready = (async () => {
        if (await this.boss.getQueue(name)) return;
        try {
          await this.boss.createQueue(name);
        } catch (e) {
          // Another process created it at the same time.
          if (!(await this.boss.getQueue(name))) throw e;
        }
      })();
      ready.catch(() => this.queues.delete(name));
      this.queues.set(name, ready);
    }
    return ready;
  }

  private async insert(tasks: readonly DispatchTask[], db: PgBoss.Db | null): Promise<void> {
    // One statement per job, in order on the transaction's connection (pg-boss's batch insert does not say
    // which jobs it dropped). pg-boss drops a job whose queue is missing without an error: it returns null.
    for (const t of tasks) {
      const name = this.queueOf(t.namespace, t.taskType);
      const data: TaskJob = {
        taskId: t.taskId,
        runId: t.runId,
        attempt: t.attempt,
        namespace: t.namespace,
        taskType: t.taskType,
        priority: t.priority,
      };
      const id = await this.boss.send(name, data, {
        priority: t.priority,
        retryLimit: this.retryLimit,
        retryDelay: 1,
        ...(t.notBefore ? { startAfter: t.notBefore } : {}),
        ...(db ? { db } : {}),
      });
      if (id === null)
        throw new Error(`pg-boss did not insert the job of task ${t.taskId}: queue ${name} is missing`);
    }
  }
}
