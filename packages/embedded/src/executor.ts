import type { Json, TaskError } from '@weft/core';
import type { LeasedTask, Logger, TaskReport, TaskService } from '@weft/engine';
import { type Handler, TerminalError } from './handlers.js';

/** How the executor runs. */
export interface ExecutorOptions {
  readonly namespace: string;
  /** The worker name in leases and history. */
  readonly worker: string;
  /** Tasks run at once. */
  readonly concurrency: number;
  readonly logger: Logger;
}

/**
 * Runs registered handlers in this process, as a worker like any other but without HTTP: it leases
 * through the engine's task service (a fresh fencing token on the task row, in the statement that takes
 * the queue row), renews its leases while a handler runs, and reports through the task service, where a
 * report lands only with the current attempt, its lease token and a task still running (seed 001,
 * invariant 7). A handler that outlives its lease is aborted and its report refused.
 */
export class Executor {
  private readonly stopper = new AbortController();
  private readonly running = new Map<string, AbortController>();
  private loop: Promise<void> | null = null;
  private slotFreed: (() => void) | null = null;

  constructor(
    private readonly tasks: TaskService,
    private readonly handlers: ReadonlyMap<string, Handler>,
    private readonly options: ExecutorOptions,
  ) {}

  start(): void {
    if (this.loop || this.handlers.size === 0) return;
    this.loop = this.run();
  }

  /** Stops taking tasks and aborts those in flight (their leases expire and they are tried again). */
  async stop(): Promise<void> {
    this.stopper.abort();
    this.slotFreed?.();
    for (const abort of this.running.values()) abort.abort(new Error('the engine is stopping'));
    await this.loop;
    this.loop = null;
  }

  /** Tasks running now. */
  get busy(): number {
    return this.running.size;
  }

  private async run(): Promise<void> {
    const types = [...this.handlers.keys()];
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
          namespace: this.options.namespace,
          worker: this.options.worker,
          taskTypes: types,
          max: free,
          waitMs: 30_000,
          signal: this.stopper.signal,
        });
        failures = 0;
        for (const task of leased) this.execute(task);
      } catch (error) {
        if (this.stopper.signal.aborted) break;
        failures++;
        this.options.logger.warn({ error: String(error) }, 'embedded executor: poll failed; retrying');
        await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** failures, 5000)));
      }
    }
  }

  private execute(task: LeasedTask): void {
    const abort = new AbortController();
    this.running.set(task.id, abort);
    const heartbeat = setInterval(() => void this.renew(task, abort), this.tasks.terms.heartbeatMs);
    heartbeat.unref();
    // An aborted task (lease lost, engine stopping) is renewed no more, even if its handler never returns:
    // its lease must run out so that another engine can take it.
    abort.signal.addEventListener('abort', () => clearInterval(heartbeat), { once: true });
    const handler = this.handlers.get(task.taskType)!;
    void (async () => {
      let outcome: TaskReport['outcome'];
      try {
        const output = await handler.run(task.input, {
          runId: task.runId,
          taskId: task.id,
          nodeId: task.nodeId,
          iteration: task.iteration,
          attempt: task.attempt,
          signal: abort.signal,
        });
        outcome = { kind: 'completed', output: (output ?? null) as Json };
      } catch (error) {
        outcome = { kind: 'failed', error: taskError(error) };
      }
      clearInterval(heartbeat);
      try {
        // A stopped engine reports nothing: the lease expires and the attempt is tried again.
        if (!this.stopper.signal.aborted && !abort.signal.aborted) await this.report(task, outcome);
      } catch (error) {
        this.options.logger.warn(
          { taskId: task.id, error: String(error) },
          'embedded executor: report failed',
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
      worker: this.options.worker,
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
      this.options.logger.warn({ taskId: task.id, why: verdict.why }, 'embedded executor: report refused');
  }

  private async renew(task: LeasedTask, abort: AbortController): Promise<void> {
    try {
      const { lost } = await this.tasks.heartbeat(this.options.namespace, this.options.worker, [
        { runId: task.runId, taskId: task.id, attempt: task.attempt, leaseToken: task.leaseToken },
      ]);
      if (lost.length > 0) abort.abort(new Error('the lease on this task was lost'));
    } catch (error) {
      this.options.logger.warn(
        { taskId: task.id, error: String(error) },
        'embedded executor: heartbeat failed',
      );
    }
  }
}

/** A thrown error as a task error: retryable unless it is a TerminalError. */
function taskError(error: unknown): TaskError {
  if (error instanceof TerminalError)
    return {
      message: error.message,
      reason: 'error',
      retryable: false,
      type: error.name,
      ...(error.details !== undefined ? { details: error.details } : {}),
    };
  if (error instanceof Error)
    return {
      message: error.message,
      reason: 'error',
      retryable: true,
      type: error.name,
      ...(error.stack ? { stack: error.stack } : {}),
    };
  return { message: String(error), reason: 'error', retryable: true };
}
