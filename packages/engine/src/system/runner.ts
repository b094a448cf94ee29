import { hostname } from 'node:os';
import type { Json, TaskError } from '@weft/core';
import type { Logger } from '../logger.js';
import { ANY_NAMESPACE } from '../pollers.js';
import type { LeasedTask, TaskReport } from '../records.js';
import type { TaskService } from '../tasks.js';

/** What a system task's handler gives back: the output, or an error (retryable or not). */
export type SystemTaskOutcome =
  | { readonly kind: 'completed'; readonly output: Json }
  | { readonly kind: 'failed'; readonly error: TaskError };

/** Runs one system task; `signal` aborts when the lease is lost or the server stops. */
export type SystemTaskHandler = (input: Json, signal: AbortSignal) => Promise<SystemTaskOutcome>;

/** How a runner runs. */
export interface SystemRunnerOptions {
  readonly handlers: Readonly<Record<string, SystemTaskHandler>>;
  /** Tasks at once. */
  readonly concurrency: number;
  readonly logger: Logger;
  /** The worker name in leases and history. */
  readonly name?: string;
}

/**
 * Runs the server's own tasks (`weft.*`, such as `http`) in process, as a worker like any other: it
 * leases through the task service (a fresh fencing token on the task row, in the same statement that
 * takes the queue row), renews its leases, and reports through the task service, where a report lands
 * only with the current attempt, the lease token and a task still running (seed 001, invariant 7: no
 * shortcut around the lease; test: "the system-task runner goes through leases and fencing").
 */
export class SystemTaskRunner {
  readonly name: string;
  private readonly stopper = new AbortController();
  private readonly running = new Map<string, { task: LeasedTask; abort: AbortController }>();
  private loop: Promise<void> | null = null;
  private slotFreed: (() => void) | null = null;

  constructor(
    private readonly tasks: TaskService,
    private readonly options: SystemRunnerOptions,
  ) {
    this.name = options.name ?? `weft-system@${hostname()}-${process.pid}`;
  }

  start(): void {
    if (this.loop || Object.keys(this.options.handlers).length === 0) return;
    this.loop = this.run();
  }

  /** Stops taking tasks and aborts those in flight (their leases expire and they are retried). */
  async stop(): Promise<void> {
    this.stopper.abort();
    this.slotFreed?.();
    for (const r of this.running.values()) r.abort.abort();
    await this.loop;
    this.loop = null;
  }

  private async run(): Promise<void> {
    const types = Object.keys(this.options.handlers);
    let failures = 0;
    while (!this.stopper.signal.aborted) {
      const free = this.options.concurrency - this.running.size;
      if (free <= 0) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        this.slotFreed = null;
        continue;
      }
      try {
        const leased = await this.tasks.poll({
          namespace: ANY_NAMESPACE,
          worker: this.name,
          taskTypes: types,
          max: free,
          waitMs: 30_000,
          signal: this.stopper.signal,
        });
        failures = 0;
        for (const task of leased) this.execute(task);
      } catch (error) {
        failures++;
        this.options.logger.warn({ error: String(error) }, 'system tasks: poll failed; retrying');
        await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** failures, 5000)));
      }
    }
  }

  private execute(task: LeasedTask): void {
    const abort = new AbortController();
    this.running.set(task.id, { task, abort });
    const heartbeat = setInterval(() => void this.renew(task, abort), this.tasks.terms.heartbeatMs);
    heartbeat.unref();
    const handler = this.options.handlers[task.taskType]!;
    void (async () => {
      let outcome: SystemTaskOutcome;
      try {
        outcome = await handler(task.input, abort.signal);
      } catch (error) {
        outcome = {
          kind: 'failed',
          error: {
            message: error instanceof Error ? error.message : String(error),
            reason: 'error',
            retryable: true,
          },
        };
      }
      clearInterval(heartbeat);
      try {
        // A stopped server reports nothing: the lease expires and the attempt is retried elsewhere.
        if (!this.stopper.signal.aborted) await this.report(task, outcome);
      } catch (error) {
        this.options.logger.warn({ taskId: task.id, error: String(error) }, 'system tasks: report failed');
      } finally {
        this.running.delete(task.id);
        this.slotFreed?.();
      }
    })();
  }

  private async report(task: LeasedTask, outcome: SystemTaskOutcome): Promise<void> {
    const report: TaskReport = {
      runId: task.runId,
      taskId: task.id,
      attempt: task.attempt,
      leaseToken: task.leaseToken,
      nodeId: task.nodeId,
      iteration: task.iteration,
      outcome,
    };
    const { verdicts } = await this.tasks.report({
      namespace: ANY_NAMESPACE,
      worker: this.name,
      reports: [report],
    });
    const verdict = verdicts[0];
    if (verdict && !verdict.accepted)
      this.options.logger.warn({ taskId: task.id, why: verdict.why }, 'system tasks: report refused');
  }

  private async renew(task: LeasedTask, abort: AbortController): Promise<void> {
    try {
      const { lost } = await this.tasks.heartbeat(ANY_NAMESPACE, this.name, [
        { runId: task.runId, taskId: task.id, attempt: task.attempt, leaseToken: task.leaseToken },
      ]);
      if (lost.length > 0) abort.abort(new Error('the lease on this task was lost'));
    } catch (error) {
      this.options.logger.warn({ taskId: task.id, error: String(error) }, 'system tasks: heartbeat failed');
    }
  }
}
