import type { TaskService } from '../services/tasks/tasks.js';
import type { LeasedTask, TaskReport } from '../store/records.js';
import type { Logger } from '../support/logger.js';

/** Runs one leased task in process; `signal` aborts when the lease is lost or the worker stops. */
export type InProcessHandler = (task: LeasedTask, signal: AbortSignal) => Promise<TaskReport['outcome']>;

/** How an in-process worker runs. */
export interface InProcessWorkerOptions {
  /** The namespace it leases in (`ANY_NAMESPACE` for the server's own tasks). */
  readonly namespace: string;
  /** The worker name in leases and history. */
  readonly name: string;
  readonly taskTypes: readonly string[];
  /** Tasks run at once. */
  readonly concurrency: number;
  readonly handler: InProcessHandler;
  readonly logger: Logger;
  /** Starts its log lines ("system tasks", "embedded executor"). */
  readonly label: string;
}

/**
 * A worker inside the engine's process, without HTTP: it leases through the task service (a fresh fencing
 * token on the task row, in the statement that takes the queue row), renews its leases while a handler runs,
 * and reports through the task service, where a report lands only with the current attempt, its lease token
 * and a task still running (invariant 13; tests: "the system-task runner goes through leases and fencing",
 * and the embedded engine's fencing tests). A handler that throws fails its attempt, retryably.
 */
export class InProcessWorker {
  private readonly stopper = new AbortController();
  private readonly running = new Map<string, AbortController>();
  private loop: Promise<void> | null = null;
  private slotFreed: (() => void) | null = null;

  constructor(
    private readonly tasks: TaskService,
    private readonly options: InProcessWorkerOptions,
  ) {}

  start(): void {
    if (this.loop || this.options.taskTypes.length === 0) return;
    this.loop = this.run();
  }

  /** Stops taking tasks and aborts those in flight (their leases expire and they are tried again). */
  async stop(): Promise<void> {
    this.stopper.abort();
    this.slotFreed?.();
    for (const abort of this.running.values()) abort.abort(new Error('the worker is stopping'));
    await this.loop;
    this.loop = null;
  }

  private async run(): Promise<void> {
    const { namespace, name, taskTypes, concurrency, logger, label } = this.options;
    let failures = 0;
    while (!this.stopper.signal.aborted) {
      const free = concurrency - this.running.size;
      if (free <= 0) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        this.slotFreed = null;
        continue;
      }
      try {
        const leased = await this.tasks.poll({
          namespace,
          worker: name,
          taskTypes: [...taskTypes],
          max: free,
          waitMs: 30_000,
          signal: this.stopper.signal,
        });
        failures = 0;
        for (const task of leased) this.execute(task);
      } catch (error) {
        if (this.stopper.signal.aborted) break;
        failures++;
        logger.warn({ error: String(error) }, `${label}: poll failed; retrying`);
        await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** failures, 5000)));
      }
    }
  }

  private execute(task: LeasedTask): void {
    const abort = new AbortController();
    this.running.set(task.id, abort);
    const heartbeat = setInterval(() => void this.renew(task, abort), this.tasks.terms.heartbeatMs);
    heartbeat.unref();
    // An aborted task (lease lost, worker stopping) is renewed no more, even if its handler never returns:
    // its lease must run out so that another process can take it.
    abort.signal.addEventListener('abort', () => clearInterval(heartbeat), { once: true });
    void (async () => {
      let outcome: TaskReport['outcome'];
      try {
        outcome = await this.options.handler(task, abort.signal);
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
        // A stopped worker reports nothing: the lease expires and the attempt is tried again. After a lost
        // lease the result is still sent, like any worker's: the engine refuses it and records the refusal.
        if (!this.stopper.signal.aborted) await this.report(task, outcome);
      } catch (error) {
        this.options.logger.warn(
          { taskId: task.id, error: String(error) },
          `${this.options.label}: report failed`,
        );
      } finally {
        this.running.delete(task.id);
        this.slotFreed?.();
      }
    })();
  }

  private async report(task: LeasedTask, outcome: TaskReport['outcome']): Promise<void> {
    const { verdicts } = await this.tasks.report({
      namespace: this.options.namespace,
      worker: this.options.name,
      reports: [
        {
          runId: task.runId,
          taskId: task.id,
          attempt: task.attempt,
          leaseToken: task.leaseToken,
          nodeId: task.nodeId,
          iteration: task.iteration,
          outcome,
        },
      ],
    });
    const verdict = verdicts[0];
    if (verdict && !verdict.accepted)
      this.options.logger.warn(
        { taskId: task.id, why: verdict.why },
        `${this.options.label}: report refused`,
      );
  }

  private async renew(task: LeasedTask, abort: AbortController): Promise<void> {
    try {
      const { lost } = await this.tasks.heartbeat(this.options.namespace, this.options.name, [
        { runId: task.runId, taskId: task.id, attempt: task.attempt, leaseToken: task.leaseToken },
      ]);
      if (lost.length > 0) abort.abort(new Error('the lease on this task was lost'));
    } catch (error) {
      this.options.logger.warn(
        { taskId: task.id, error: String(error) },
        `${this.options.label}: heartbeat failed`,
      );
    }
  }
}
