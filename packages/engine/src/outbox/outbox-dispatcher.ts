import { isSystemTaskType } from '@weft/core';
import { taskMessageRow } from '../decisions/outbox-rows.js';
import type { RowDispatcher } from '../dispatch/dispatcher.js';
import type { QueueRow } from '../store/write-set.js';

/**
 * A dispatcher for a queue outside PostgreSQL (Redis): a queued task becomes an outbox row in the task's own
 * transaction, and the relay carries it to the queue after commit (invariant 7). The message is only a
 * wake-up: workers lease by task id through the server, where the lease and its fencing token live, so a
 * duplicate or stale message leases nothing. The row is written only if the task row was (an absorbed insert
 * sends nothing).
 *
 * Two kinds of task stay on the table queue: system tasks (`weft.*`), which the server runs itself, and tasks
 * under limits (semaphores, a rate limit, a capped task type), because only the table's gated lease path
 * counts limits; a lease by id refuses a capped type (invariant 16; test: "keeps tasks under limits on the
 * table queue: only its gated lease path counts limits"). Workers of such a server also poll the table for
 * them.
 */
export function outboxDispatcher(name = 'redis'): RowDispatcher {
  return {
    kind: 'rows',
    name,
    addRows(writes, tasks) {
      for (const task of tasks) {
        if (isSystemTaskType(task.taskType) || onTable(task)) writes.queue.push(task);
        else writes.outbox.push(taskMessageRow(task));
      }
    },
  };
}

/** True for a task under a limit: it must be leased through the table queue's gated path. */
function onTable(task: QueueRow): boolean {
  return task.capped === true || (task.gates !== undefined && task.gates !== null);
}
