import type { QueueRow, WriteSet } from './records.js';

/**
 * How queued tasks reach workers. `enqueue` runs inside the transaction that makes the tasks queued and
 * adds to its write set whatever delivery needs, so a task is never queued without a way to reach a worker
 * and never announced before it exists.
 */
export interface Dispatcher {
  readonly name: string;
  enqueue(writes: WriteSet, tasks: readonly QueueRow[]): void;
}

/**
 * The default dispatcher: a queue table in the same PostgreSQL, written in the task's own transaction.
 * Workers lease from it by polling the server.
 */
export const tableDispatcher: Dispatcher = {
  name: 'table',
  enqueue(writes, tasks) {
    writes.queue.push(...tasks);
  },
};
