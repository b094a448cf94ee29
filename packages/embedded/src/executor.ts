import type { Json, TaskError } from '@weft/core';
import type { Logger, TaskLogService, TaskReport, TaskService } from '@weft/engine';
import { InProcessWorker } from '@weft/engine/internal';
import { AttemptLog } from './attempt-log.js';
import { type Handler, TerminalError } from './handlers.js';

/** How the executor runs. */
export interface ExecutorOptions {
  readonly namespace: string;
  /** The worker name in leases and history. */
  readonly worker: string;
  /** Tasks run at once. */
  readonly concurrency: number;
  readonly logger: Logger;
  /** Where `ctx.log` lines go. */
  readonly logs: TaskLogService;
}

/**
 * Runs registered handlers in this process, as a worker like any other but without HTTP (see
 * InProcessWorker: leased with a fencing token, renewed while the handler runs, reported with the token).
 * A handler that outlives its lease is aborted and its report refused.
 */
export class Executor {
  private readonly worker: InProcessWorker;

  constructor(tasks: TaskService, handlers: ReadonlyMap<string, Handler>, options: ExecutorOptions) {
    this.worker = new InProcessWorker(tasks, {
      namespace: options.namespace,
      name: options.worker,
      taskTypes: [...handlers.keys()],
      concurrency: options.concurrency,
      logger: options.logger,
      label: 'embedded executor',
      handler: async (task, abort): Promise<TaskReport['outcome']> => {
        const held = {
          runId: task.runId,
          taskId: task.id,
          attempt: task.attempt,
          leaseToken: task.leaseToken,
        };
        const log = new AttemptLog(options.logs, options.namespace, held, options.logger);
        try {
          const output = await handlers.get(task.taskType)!.run(task.input, {
            runId: task.runId,
            taskId: task.id,
            nodeId: task.nodeId,
            iteration: task.iteration,
            attempt: task.attempt,
            idempotencyKey: task.idempotencyKey,
            // Made when the handler first reads it (see InProcessWorker).
            get signal() {
              return abort.signal;
            },
            log: log.log,
          });
          return { kind: 'completed', output: (output ?? null) as Json };
        } catch (error) {
          return { kind: 'failed', error: taskError(error) };
        } finally {
          // The attempt's lines are written before its report, which ends its lease.
          const closing = log.close();
          if (closing) await closing;
        }
      },
    });
  }

  start(): void {
    this.worker.start();
  }

  /** Stops taking tasks and aborts those in flight (their leases expire and they are tried again). */
  stop(): Promise<void> {
    return this.worker.stop();
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
