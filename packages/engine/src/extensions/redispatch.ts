import type { EngineContext } from '../context.js';

/**
 * The repair of write-then-enqueue dispatch (seed 003). A crash between a transaction's commit and the
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

  constructor(private readonly ctx: EngineContext) {}

  /** One round of the background repair; returns false (the loop waits for its next poll). */
  async round(): Promise<boolean> {
    const mode = this.ctx.dispatchMode;
    // With a dispatcher that joins the transaction, a task and its message commit together.
    if (mode.kind !== 'after_commit') return false;
    const tasks = await mode.repair.undispatchedTasks({
      olderThanMs: this.ctx.config.redispatchAfterMs,
      limit: 500,
    });
    if (tasks.length === 0) return false;
    await mode.dispatcher.enqueue(tasks);
    this.resent += tasks.length;
    this.ctx.logger.warn({ tasks: tasks.length }, 'sent queued tasks left without a message again');
    return false;
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
