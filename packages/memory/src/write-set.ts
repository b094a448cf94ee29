import type { WriteSet } from '@weft/engine';
import type { Op } from './convert.js';
import {
  appendHistory,
  appendInbox,
  deleteInbox,
  insertTimers,
  requestDecisions,
  writeMailboxes,
} from './decisions.js';
import { closeHumanTasks, insertHumanTasks } from './human.js';
import { insertOutbox } from './outbox.js';
import { enqueueTasks } from './queue.js';
import { setAttributes, updateRuns } from './runs.js';
import { cancelOpenWork, insertTasks, stopChildren, updateTasks } from './tasks.js';

/**
 * Writes everything a pass decided, in the order the Postgres store sends its statements: task inserts
 * and updates first (children are stopped before their attempts are cancelled; outbox rows tied to a task
 * see this pass's inserts), outbox rows last.
 */
export function applyWriteSet(
  op: Op,
  w: WriteSet,
): { absorbed: { runId: string; nodeId: string; iteration: string; attempt: number }[] } {
  const absorbed = insertTasks(op, w.newTasks);
  updateTasks(op, w.taskUpdates);
  enqueueTasks(op, w.queue);
  stopChildren(op, w.stopChildren);
  cancelOpenWork(op, w.cancelOpenWork);
  insertTimers(op, w.timers);
  updateRuns(op, w.runUpdates);
  appendHistory(op, w.history);
  deleteInbox(op, w.inboxDone);
  appendInbox(op, w.inboxAppend);
  requestDecisions(op, w.decisionRequests, 'deferred event');
  writeMailboxes(op, w.mailboxes);
  insertHumanTasks(op, w.humanTasks);
  closeHumanTasks(op, w.humanTaskCloses);
  setAttributes(op, w.attributes);
  insertOutbox(op, w.outbox);
  return {
    absorbed: absorbed.map((r) => ({
      runId: r.runId,
      nodeId: r.nodeId,
      iteration: r.iteration,
      attempt: r.attempt,
    })),
  };
}
