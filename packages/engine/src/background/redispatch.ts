import type { DispatchMode } from '../dispatch/dispatch-mode.js';
import type { NamedTask } from '../dispatch/dispatcher.js';
import type { Store } from '../store/store.js';
import type { EngineConfig } from '../support/config.js';
import type { Logger } from '../support/logger.js';

/** What the repair of dispatch uses. */
export interface RedispatcherDeps {
  readonly store: Store;
  readonly dispatchMode: DispatchMode;
  readonly logger: Logger;
  readonly config: Pick<EngineConfig, 'redispatchAfterMs'>;
}

/**
 * The repair of write-then-enqueue dispatch (invariant 17). A crash between a transaction's commit and the
 * dispatcher's enqueue leaves tasks queued with no message behind them. Two paths send them again:
 * - a background round sends queued tasks that have waited longer than `redispatchAfterMs` (a duplicate
 *   message is harmless: a lease by id leases only a task still queued at that attempt);
 * - a redelivered message for a task that has already finished re-drives its run: the run's queued tasks
 *   without a message are sent at once, so the step's successors do not wait for the round.
 * With Weft's own dispatchers (rows in the task's transaction) there is nothing to repair.
 */
export class Redispatcher {
  /** Tasks sent again since this engine started. */
  resent = 0;
  /** When each attempt was last sent again by this engine: a task waiting long for a consumer is resent
   * once per `redispatchAfterMs`, not every round. */
  private readonly recent = new Map<string, number>();

  /** One per engine, shared by its background loop and its task service's lease by id. */
  constructor(private readonly ctx: RedispatcherDeps) {}

  /** One round of the background repair; returns false (the loop waits for its next poll). */
  async round(): Promise<boolean> {
    const mode = this.ctx.dispatchMode;
    // With a dispatcher that joins the transaction, a task and its message commit together.
    if (mode.kind !== 'after_commit') return false;
    const tasks = await mode.repair.undispatchedTasks({
      olderThanMs: this.ctx.config.redispatchAfterMs,
      limit: 500,
    });
    const now = Date.now();
    const every = this.ctx.config.redispatchAfterMs;
    for (const [k, at] of this.recent) if (now - at >= every) this.recent.delete(k);
    const due = tasks.filter((t) => !this.recent.has(`${t.taskId}/${t.attempt}`));
    if (due.length === 0) return false;
    await mode.dispatcher.enqueue(due);
    for (const t of due) this.recent.set(`${t.taskId}/${t.attempt}`, now);
    this.resent += due.length;
    this.ctx.logger.warn({ tasks: due.length }, 'sent queued tasks left without a message again');
    return false;
  }

  /**
   * Messages named these attempts and leased nothing: the runs of those that have finished are re-driven
   * (a message for a finished attempt may mean its successors lost theirs to a crash).
   */
  async redriveFinished(named: readonly NamedTask[]): Promise<void> {
    const finished: string[] = [];
    for (const runId of new Set(named.map((t) => t.runId))) {
      const rows = await this.ctx.store.listTasks(runId);
      const done = named.some((t) =>
        rows.some(
          (r) => r.runId === t.runId && r.id === t.taskId && r.attempt === t.attempt && isFinal(r.status),
        ),
      );
      if (done) finished.push(runId);
    }
    if (finished.length > 0) await this.redrive(finished);
  }

  /** A message named a task of these runs that has already finished: sends their queued tasks again. */
  async redrive(runIds: readonly string[]): Promise<number> {
    const mode = this.ctx.dispatchMode;
    if (mode.kind === 'rows' || !mode.repair || runIds.length === 0) return 0;
    const tasks = await mode.repair.undispatchedTasks({ olderThanMs: 0, limit: 1000, runIds });
    if (tasks.length === 0) return 0;
    await mode.dispatcher.enqueue(tasks);
    this.resent += tasks.length;
    return tasks.length;
  }
}

function isFinal(status: string): boolean {
  return status !== 'queued' && status !== 'running' && status !== 'waiting';
}
