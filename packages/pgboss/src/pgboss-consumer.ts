import { type DeliveryTarget, runDelivered, type StepHandler } from '@weft/engine';
import type PgBoss from 'pg-boss';
import type { PgBossDispatcher, TaskJob } from './pgboss-dispatcher.js';

/** What a pg-boss consumer runs. */
export interface PgBossConsumerOptions {
  readonly boss: PgBoss;
  /** The dispatcher whose queues to take from (for their names and creation). */
  readonly dispatcher: PgBossDispatcher;
  /** The engine's task service (in this process), or anything with the same lease-by-id and report calls. */
  readonly tasks: DeliveryTarget;
  readonly namespace: string;
  /** Handlers by task type: each type's queue is consumed. */
  readonly handlers: Readonly<Record<string, StepHandler>>;
  readonly worker?: string;
  /** Jobs taken per fetch, per queue. */
  readonly batchSize?: number;
  /** How often pg-boss looks for jobs when a queue is empty (at least 0.5 s). */
  readonly pollingIntervalSeconds?: number;
}

/**
 * Takes pg-boss jobs and runs their steps: each job names an attempt, which is leased by id (fenced: only
 * a task still queued at that attempt, with a fresh token), run, and reported. A job for an attempt that
 * moved on (a duplicate, a redelivery after a crash, a deferral by the gate) leases nothing and is
 * acknowledged; a job for a finished attempt also re-drives its run (the engine's redelivery repair). A
 * job is acknowledged only after the report, so a consumer that crashes before it gets it again.
 */
export class PgBossConsumer {
  private readonly workers: string[] = [];

  constructor(private readonly options: PgBossConsumerOptions) {}

  /** Starts one pg-boss worker per handled task type. */
  async start(): Promise<void> {
    const o = this.options;
    const types = Object.keys(o.handlers);
    await o.dispatcher.prepare(types.map((taskType) => ({ namespace: o.namespace, taskType })));
    for (const taskType of types) {
      const handler = o.handlers[taskType]!;
      const id = await o.boss.work<TaskJob>(
        o.dispatcher.queueOf(o.namespace, taskType),
        { batchSize: o.batchSize ?? 10, pollingIntervalSeconds: o.pollingIntervalSeconds ?? 0.5 },
        async (jobs) => {
          await Promise.all(
            jobs.map((job) => runDelivered(o.tasks, job.data, { worker: o.worker ?? 'pgboss', handler })),
          );
        },
      );
      this.workers.push(id);
    }
  }

  /** Stops taking jobs (jobs in hand are finished first by pg-boss's stop). */
  async stop(): Promise<void> {
    for (const id of this.workers.splice(0)) await this.options.boss.offWork({ id });
  }
}
