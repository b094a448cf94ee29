import { isSystemTaskType } from '@weft/core';
import type { Dispatcher } from './dispatcher.js';
import { taskMessageRow } from './outbox/writes.js';

/**
 * A dispatcher for a queue outside PostgreSQL (Redis): a queued task becomes an outbox row in the task's
 * own transaction, and the relay carries it to the queue after commit (seed 000). The message is only a
 * wake-up: workers lease by task id through the server, where the lease and its fencing token live, so a
 * duplicate or stale message leases nothing. The row is written only if the task row was (an absorbed
 * insert sends nothing). System tasks (`weft.*`) stay on the table queue: the server runs them itself.
 */
export function outboxDispatcher(name = 'redis'): Dispatcher {
  return {
    name,
    enqueue(writes, tasks) {
      for (const task of tasks) {
        if (isSystemTaskType(task.taskType)) writes.queue.push(task);
        else writes.outbox.push(taskMessageRow(task));
      }
    },
  };
}
