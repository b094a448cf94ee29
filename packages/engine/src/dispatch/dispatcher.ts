import type { DispatchTask } from '../store/records.js';
import type { QueueRow, WriteSet } from '../store/write-set.js';

/** A task named by a message, as a lease by id receives it. */
export interface NamedTask {
  readonly runId: string;
  readonly taskId: string;
  readonly attempt: number;
  /** The task's type, when the message carries it (the gate is told). */
  readonly taskType?: string;
}

/**
 * Weft's built-in form of dispatch: rows that the store writes in the task's own transaction (the table
 * queue, or outbox rows relayed to Redis). Transactional by construction.
 */
export interface RowDispatcher {
  readonly kind: 'rows';
  readonly name: string;
  /** Adds to the transaction's write set whatever delivery needs; called inside that transaction. */
  addRows(writes: WriteSet, tasks: readonly QueueRow[]): void;
}

/**
 * A queue of one's own (pg-boss, SQS, BullMQ, …). `enqueue` is called after the transaction that made the
 * tasks queued has committed; a crash in between is repaired by the engine (queued tasks with no dispatch
 * are sent again after `redispatchAfterMs`, and a redelivered message for a finished task re-sends its
 * run's queued tasks). A dispatcher whose queue lives in the store's database may also offer `enqueueIn`,
 * which joins the store's open transaction (see `TransactionalStore`): then the tasks and their messages
 * commit together and the window does not exist.
 *
 * Tasks the engine runs itself (`weft.*`) and tasks under limits (semaphores, rate limits, capped task
 * types) never reach a queue dispatcher: they stay on the table queue, whose gated lease path counts limits.
 */
export interface QueueDispatcher {
  readonly kind: 'queue';
  readonly name: string;
  /** Sends messages for tasks whose transaction has committed. Must honour `notBefore`. */
  enqueue(tasks: readonly DispatchTask[]): Promise<void>;
  /**
   * Sends messages inside the store's open transaction, through `handle` (what the store's
   * `runInTransaction` hands out; opaque to the engine). If the transaction rolls back, no message may
   * remain. Offer it only when the queue shares the store's database.
   */
  enqueueIn?(handle: unknown, tasks: readonly DispatchTask[]): Promise<void>;
}

/** How queued tasks reach workers: Weft's own rows, or a queue of one's own. */
export type Dispatcher = RowDispatcher | QueueDispatcher;

/**
 * The default dispatcher: a queue table in the same PostgreSQL, written in the task's own transaction.
 * Workers lease from it by polling the server.
 */
export const tableDispatcher: RowDispatcher = {
  kind: 'rows',
  name: 'table',
  addRows(writes, tasks) {
    writes.queue.push(...tasks);
  },
};

/** A queue row as a message for a queue dispatcher; `now` is the transaction's time, for its delay. */
export function dispatchTaskOf(row: QueueRow, now: Date): DispatchTask {
  return {
    taskId: row.taskId,
    runId: row.runId,
    attempt: row.attempt,
    namespace: row.namespace,
    taskType: row.taskType,
    priority: row.priority,
    notBefore: row.delayMs > 0 ? new Date(now.getTime() + row.delayMs) : null,
  };
}
