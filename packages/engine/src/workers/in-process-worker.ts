import type { TaskService } from '../services/tasks/tasks.js';
import type { LeasedTask, TaskReport } from '../store/records.js';
import type { Logger } from '../support/logger.js';
import { ReportBatches } from './report-batches.js';

/** A running task's abort: its `signal` aborts when the lease is lost or the worker stops. */
export interface TaskAbort {
  readonly signal: AbortSignal;
}

/** Runs one leased task in process; `abort.signal` aborts when the lease is lost or the worker stops. */
export type InProcessHandler = (task: LeasedTask, abort: TaskAbort) => Promise<TaskReport['outcome']>;

/**
 * A task's abort, its AbortController made only when the handler asks for the signal: most handlers never
 * do, and a controller and its signal cost more than the rest of a no-op task's bookkeeping.
 */
class LazyAbort implements TaskAbort {
  private controller: AbortController | null = null;
  private reason: unknown;
  aborted = false;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

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
  /** Report transactions in flight at once (2 by default, as the HTTP worker). */
  readonly reportsInFlight?: number;
}

interface Running {
  readonly task: LeasedTask;
  readonly abort: LazyAbort;
}

/** How long one poll waits in the task service when nothing is queued. */
const POLL_WAIT_MS = 30_000;

/**
 * A worker inside the engine's process, without HTTP: it leases through the task service (a fresh fencing
 * token on the task row, in the statement that takes the queue row), renews its leases while handlers run,
 * and reports through the task service, where a report lands only with the current attempt, its lease token
 * and a task still running (invariant 13; tests: "the system-task runner goes through leases and fencing",
 * and the embedded engine's fencing tests). A handler that throws fails its attempt, retryably.
 *
 * Like the HTTP worker, it reports in batches that also lease its next tasks (see ReportBatches), renews the
 * leases of all its running tasks in one call per interval, and polls only when no report is about to bring
 * it work: a busy worker goes from report to report, an idle one waits in a long poll.
 */
export class InProcessWorker {
  private readonly stopper = new AbortController();
  private readonly running = new Map<string, Running>();
  private readonly reports: ReportBatches;
  private polling: Promise<void> | null = null;
  private pollReserved = 0;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private started = false;

  constructor(
    private readonly tasks: TaskService,
    private readonly options: InProcessWorkerOptions,
  ) {
    this.reports = new ReportBatches(tasks, {
      namespace: options.namespace,
      worker: options.name,
      taskTypes: options.taskTypes,
      logger: options.logger,
      label: options.label,
      inFlight: Math.max(1, options.reportsInFlight ?? 2),
      room: () => (this.stopper.signal.aborted ? 0 : this.free),
      leased: (tasks) => {
        for (const task of tasks) this.execute(task);
      },
      settled: () => this.schedule(),
    });
  }

  start(): void {
    if (this.started || this.options.taskTypes.length === 0) return;
    this.started = true;
    this.heartbeat = setInterval(() => void this.renew(), this.tasks.terms.heartbeatMs);
    this.heartbeat.unref();
    this.schedule();
  }

  /**
   * Stops taking tasks and aborts those in flight (their leases expire and they are tried again): their
   * results are not reported. Resolves once the poll and the reports already on their way have ended.
   */
  async stop(): Promise<void> {
    this.stopper.abort();
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const { abort } of this.running.values()) abort.abort(new Error('the worker is stopping'));
    await Promise.all([this.polling, this.reports.close()]);
  }

  private get free(): number {
    return this.options.concurrency - this.running.size - this.pollReserved - this.reports.reserved;
  }

  /** Starts a poll when slots are free and no report is about to bring tasks. */
  private schedule(): void {
    if (!this.started || this.stopper.signal.aborted || this.polling || this.retryTimer) return;
    if (this.reports.busy || this.free <= 0) return;
    this.pollReserved = this.free;
    this.polling = this.poll(this.pollReserved).finally(() => {
      this.pollReserved = 0;
      this.polling = null;
      this.schedule();
    });
  }

  private async poll(max: number): Promise<void> {
    const { namespace, name, taskTypes, logger, label } = this.options;
    try {
      const leased = await this.tasks.poll({
        namespace,
        worker: name,
        taskTypes: [...taskTypes],
        max,
        waitMs: POLL_WAIT_MS,
        signal: this.stopper.signal,
      });
      this.failures = 0;
      this.pollReserved = 0;
      for (const task of leased) this.execute(task);
    } catch (error) {
      if (this.stopper.signal.aborted) return;
      this.failures++;
      logger.warn({ error: String(error) }, `${label}: poll failed; retrying`);
      this.retryTimer = setTimeout(
        () => {
          this.retryTimer = null;
          this.schedule();
        },
        Math.min(50 * 2 ** this.failures, 5000),
      );
    }
  }

  private execute(task: LeasedTask): void {
    if (this.stopper.signal.aborted) return;
    const abort = new LazyAbort();
    this.running.set(task.id, { task, abort });
    void (async () => {
      let outcome: TaskReport['outcome'];
      try {
        outcome = await this.options.handler(task, abort);
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
      this.running.delete(task.id);
      // A stopped worker reports nothing: the lease expires and the attempt is tried again. After a lost
      // lease the result is still sent, like any worker's: the engine refuses it and records the refusal.
      if (!this.stopper.signal.aborted) this.reports.add({ task, outcome });
    })();
  }

  /**
   * Renews the leases of every running task in one call. An aborted task (lease lost, worker stopping) is
   * renewed no more, even if its handler never returns: its lease must run out so another process can take it.
   */
  private async renew(): Promise<void> {
    const held = [...this.running.values()].filter((r) => !r.abort.aborted);
    if (held.length === 0) return;
    try {
      const { lost } = await this.tasks.heartbeat(
        this.options.namespace,
        this.options.name,
        held.map(({ task }) => ({
          runId: task.runId,
          taskId: task.id,
          attempt: task.attempt,
          leaseToken: task.leaseToken,
        })),
      );
      for (const id of lost) this.running.get(id)?.abort.abort(new Error('the lease on this task was lost'));
    } catch (error) {
      this.options.logger.warn(
        { taskIds: held.map((r) => r.task.id), error: String(error) },
        `${this.options.label}: heartbeat failed`,
      );
    }
  }
}
