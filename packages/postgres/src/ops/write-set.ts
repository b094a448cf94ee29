import type { WriteSet } from '@weft/engine';
import type { Db } from '../db.js';
import { requestDecisions } from './decide-queue.js';
import { appendHistory } from './history.js';
import { closeHumanTasks, insertHumanTasks } from './human-tasks.js';
import { appendInbox, deleteInbox } from './inbox.js';
import { writeMailboxes } from './mailboxes.js';
import { insertOutbox } from './outbox.js';
import { enqueueTasks } from './queue.js';
import { setAttributes } from './run-attributes.js';
import { updateRuns } from './runs.js';
import { insertTimers } from './timers.js';
import { cancelOpenWork, insertTasks, stopChildren, updateTasks } from './write-tasks.js';

/**
 * Writes everything a pass decided, as pipelined statements on the transaction's connection: one round
 * trip for the lot. The caller holds the row locks of every run in the write set.
 */
export async function applyWriteSet(
  sql: Db,
  w: WriteSet,
): Promise<{ absorbed: { runId: string; nodeId: string; iteration: string; attempt: number }[] }> {
  const [absorbed] = await Promise.all([
    insertTasks(sql, w.newTasks),
    updateTasks(sql, w.taskUpdates),
    enqueueTasks(sql, w.queue),
    // Before the attempts are cancelled: it cascades to the children of those still unfinished.
    stopChildren(sql, w.stopChildren),
    cancelOpenWork(sql, w.cancelOpenWork),
    insertTimers(sql, w.timers),
    updateRuns(sql, w.runUpdates),
    appendHistory(sql, w.history),
    deleteInbox(sql, w.inboxDone),
    appendInbox(sql, w.inboxAppend),
    requestDecisions(sql, w.decisionRequests, 'deferred event'),
    writeMailboxes(sql, w.mailboxes),
    insertHumanTasks(sql, w.humanTasks),
    setAttributes(sql, w.attributes),
    closeHumanTasks(sql, w.humanTaskCloses),
    // Last: the outbox rows tied to a task see this pass's task inserts (see insertOutbox).
    insertOutbox(sql, w.outbox),
  ]);
  return {
    absorbed: absorbed.map((r) => ({
      runId: r.runId,
      nodeId: r.nodeId,
      iteration: r.iteration,
      attempt: r.attempt,
    })),
  };
}
