import { taskKey } from '@weft/core';
import { type Dispatcher, dispatchTaskOf } from '../dispatch/dispatcher.js';
import type { NewTaskRow, QueueRow } from '../store/write-set.js';
import { fault } from '../support/faults.js';
import type { Logger } from '../support/logger.js';

/**
 * The tasks one pass gives a queue dispatcher (not Weft's own rows): sent inside the store's transaction
 * when the pass has a handle to join, else after commit.
 */
export class PassDispatch {
  private tasks: QueueRow[] = [];

  constructor(private readonly dispatcher: Dispatcher) {}

  /** The pass's tasks for the dispatcher. */
  set(tasks: QueueRow[]): void {
    this.tasks = tasks;
  }

  /** True when there is something to send. */
  get pending(): boolean {
    return this.tasks.length > 0;
  }

  /** Drops tasks whose insert was absorbed (`gone`: `run/key/attempt`): their identity exists with another id. */
  dropAbsorbed(gone: ReadonlySet<string>, newTasks: readonly NewTaskRow[]): void {
    if (this.tasks.length === 0) return;
    const keyOf = new Map(
      newTasks.map((t) => [t.id, `${t.runId}/${taskKey(t.nodeId, t.iteration)}/${t.attempt}`]),
    );
    this.tasks = this.tasks.filter((q) => !gone.has(keyOf.get(q.taskId) ?? ''));
  }

  /** Sends the tasks through the store's open transaction (after the writes, before the commit). */
  async sendIn(handle: unknown): Promise<void> {
    const d = this.dispatcher;
    if (d.kind !== 'queue' || !d.enqueueIn) throw new Error('enqueueIn needs a queue dispatcher that joins');
    const tasks = this.tasks;
    this.tasks = [];
    const now = new Date();
    await d.enqueueIn(
      handle,
      tasks.map((q) => dispatchTaskOf(q, now)),
    );
  }

  /**
   * Sends the tasks once the transaction has committed. A failure is logged: the engine's repair sends
   * them again (see Redispatcher).
   */
  async sendAfterCommit(logger: Logger | null): Promise<void> {
    const d = this.dispatcher;
    if (this.tasks.length === 0 || d.kind !== 'queue') return;
    const tasks = this.tasks;
    this.tasks = [];
    // The crash window of write-then-enqueue (test: "finishes a run whose dispatch was interrupted between
    // commit and enqueue").
    await fault('dispatch.after-commit');
    const now = new Date();
    try {
      await d.enqueue(tasks.map((q) => dispatchTaskOf(q, now)));
    } catch (e) {
      logger?.warn(
        { dispatcher: d.name, tasks: tasks.length, error: e instanceof Error ? e.message : String(e) },
        'could not enqueue after commit; the tasks will be sent again by the repair',
      );
    }
  }
}
