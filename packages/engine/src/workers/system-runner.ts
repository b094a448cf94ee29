import { hostname } from 'node:os';
import type { Json, TaskError } from '@weft/core';
import type { TaskService } from '../services/tasks/tasks.js';
import { ANY_NAMESPACE } from '../store/namespaces.js';
import type { Logger } from '../support/logger.js';
import { traceSystemTask } from '../tracing/system-task-spans.js';
import { InProcessWorker } from './in-process-worker.js';

/** What a system task's handler gives back: the output, or an error (retryable or not). */
export type SystemTaskOutcome =
  | { readonly kind: 'completed'; readonly output: Json }
  | { readonly kind: 'failed'; readonly error: TaskError };

/** Runs one system task; `signal` aborts when the lease is lost or the server stops. */
export type SystemTaskHandler = (
  input: Json,
  signal: AbortSignal,
  task: { readonly runId: string },
) => Promise<SystemTaskOutcome>;

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
 * Runs the server's own tasks (`weft.*`, such as `http`) in process, as a worker like any other (see
 * InProcessWorker): leased, renewed and reported through the task service, with no shortcut around the lease
 * (invariant 13; test: "the system-task runner goes through leases and fencing").
 */
export class SystemTaskRunner {
  readonly name: string;
  private readonly worker: InProcessWorker;

  constructor(tasks: TaskService, options: SystemRunnerOptions) {
    this.name = options.name ?? `weft-system@${hostname()}-${process.pid}`;
    this.worker = new InProcessWorker(tasks, {
      namespace: ANY_NAMESPACE,
      name: this.name,
      taskTypes: Object.keys(options.handlers),
      concurrency: options.concurrency,
      logger: options.logger,
      label: 'system tasks',
      handler: (task, abort) =>
        traceSystemTask(task, this.name, () =>
          options.handlers[task.taskType]!(task.input, abort.signal, task),
        ),
    });
  }

  start(): void {
    this.worker.start();
  }

  /** Stops taking tasks and aborts those in flight (their leases expire and they are retried). */
  stop(): Promise<void> {
    return this.worker.stop();
  }
}
