import type { TaskService } from '../services/tasks/tasks.js';
import type { LeasedTask, TaskReport } from '../store/records.js';
import type { Logger } from '../support/logger.js';

/** A task whose handler has returned, with what it returned. */
export interface FinishedTask {
  readonly task: LeasedTask;
  readonly outcome: TaskReport['outcome'];
}

/** What report batches need from the worker they serve. */
export interface ReportBatchOptions {
  readonly namespace: string;
  readonly worker: string;
  readonly taskTypes: readonly string[];
  readonly logger: Logger;
  readonly label: string;
  /** Report transactions in flight at once. */
  readonly inFlight: number;
  /** The worker's free room now (slots neither running nor promised to a poll or a report). */
  readonly room: () => number;
  /** Called with the tasks a report's transaction leased for the worker. */
  readonly leased: (tasks: LeasedTask[]) => void;
  /** Called when a report transaction has ended, however it ended. */
  readonly settled: () => void;
}

/** Most reports in one transaction, and most tasks one report asks for (as the HTTP routes allow). */
const MAX_REPORTS = 1000;
const MAX_ASKED = 500;

/**
 * The reports of an in-process worker, sent in batches as the HTTP worker sends them: tasks finishing in the
 * same turn of the event loop go in one `tasks.report` call (one transaction), at most `inFlight` such calls
 * at once, and reports finishing meanwhile wait for the next batch. Each call asks, with `next`, for as many
 * tasks as the worker has room for, so the same call leases the worker's next tasks (handed over by the
 * decisions it makes, or taken from the queue; see leaseQueuedForReport and leaseRestForReport). Batching changes nothing a
 * report is checked against: each one is applied with its own attempt and lease token (invariant 13).
 */
export class ReportBatches {
  private pending: FinishedTask[] = [];
  private sending = 0;
  private asked = 0;
  private scheduled = false;
  private closed = false;
  private readonly calls = new Set<Promise<void>>();

  constructor(
    private readonly tasks: TaskService,
    private readonly options: ReportBatchOptions,
  ) {}

  /** Room promised to the reports in flight (the tasks they may bring back). */
  get reserved(): number {
    return this.asked;
  }

  /** True while reports wait or are on their way: the worker's next tasks may come with them. */
  get busy(): boolean {
    return this.pending.length > 0 || this.sending > 0;
  }

  /** Queues a finished task's report; it goes at the end of this turn of the event loop. */
  add(finished: FinishedTask): void {
    if (this.closed) return;
    this.pending.push(finished);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /**
   * Sends nothing more: reports not yet sent are dropped (their leases expire and the attempts are tried
   * again), and tasks leased by the reports in flight are not run. Resolves when those reports have ended.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.pending = [];
    await Promise.all([...this.calls]);
  }

  private flush(): void {
    if (this.closed || this.sending >= this.options.inFlight || this.pending.length === 0) return;
    const batch = this.pending.splice(0, MAX_REPORTS);
    const want = Math.max(0, Math.min(this.options.room(), MAX_ASKED));
    this.asked += want;
    this.sending++;
    const call = this.send(batch, want).finally(() => {
      this.calls.delete(call);
      this.asked -= want;
      this.sending--;
      this.flush();
      this.options.settled();
    });
    this.calls.add(call);
  }

  private async send(batch: readonly FinishedTask[], want: number): Promise<void> {
    const { namespace, worker, taskTypes, logger, label } = this.options;
    try {
      const { verdicts, leased } = await this.tasks.report({
        namespace,
        worker,
        reports: batch.map(({ task, outcome }) => ({
          runId: task.runId,
          taskId: task.id,
          attempt: task.attempt,
          leaseToken: task.leaseToken,
          nodeId: task.nodeId,
          iteration: task.iteration,
          outcome,
        })),
        ...(want > 0 ? { next: { taskTypes, max: want } } : {}),
      });
      for (const [i, verdict] of verdicts.entries())
        if (!verdict.accepted)
          logger.warn({ taskId: batch[i]!.task.id, why: verdict.why }, `${label}: report refused`);
      // Leased after stop: not run; their leases expire and they are tried again.
      if (!this.closed && leased.length > 0) this.options.leased(leased);
    } catch (error) {
      // Nothing of the batch counted: the leases expire and the attempts are tried again (at-least-once).
      logger.warn({ taskIds: batch.map((f) => f.task.id), error: String(error) }, `${label}: report failed`);
    }
  }
}
