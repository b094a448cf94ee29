import { taskKey } from '@weft/core';
import { uuidv7 } from '../../support/ids.js';
import { humanTaskEventRows } from '../human-task-events.js';
import { effectRow } from '../outbox-rows.js';
import { type ActionScope, type ActionWriter, attemptKey } from './action-scope.js';

/**
 * An effect that leaves the run, as an outbox row. The row is tied to its attempt's task row: if that
 * insert is absorbed, the effect goes too.
 */
export const writeEffect: ActionWriter<'effect'> = (scope, action) => {
  const taskId = action.task
    ? (scope.ids.get(taskKey(action.task.nodeId, action.task.iteration)) ?? null)
    : null;
  if (action.effect.kind === 'start_run' && action.task) {
    const row = scope.touched.get(attemptKey(action.task))?.row;
    if (row) row.childRunId = action.effect.runId;
  }
  scope.writes.outbox.push(effectRow(scope.run, action.effect, taskId));
};

/** A timer: a retry's backoff, a wait, a wait's timeout. */
export const setTimer: ActionWriter<'set_timer'> = (scope, action) => {
  scope.writes.timers.push({
    id: uuidv7(scope.run.now.getTime()),
    runId: scope.run.id,
    dueAt: action.dueAt,
    purpose: action.purpose,
  });
};

/** A signal mailbox as it now is: the last state of a mailbox in this pass is the one to store. */
export const putMailbox: ActionWriter<'put_mailbox'> = (scope, action) => {
  const w = scope.writes;
  const at = w.mailboxes.findIndex(
    (m) =>
      m.runId === scope.run.id &&
      m.mailbox.name === action.mailbox.name &&
      m.mailbox.correlation === action.mailbox.correlation,
  );
  if (at >= 0) w.mailboxes.splice(at, 1);
  w.mailboxes.push({ runId: scope.run.id, mailbox: action.mailbox });
};

/** A task for people in the inbox, for a `human` node's attempt. */
export const openHumanTask: ActionWriter<'open_human_task'> = (scope, action) => {
  const { run } = scope;
  const taskId = scope.ids.get(taskKey(action.nodeId, action.iteration));
  if (!taskId) return;
  scope.writes.humanTasks.push({
    runId: run.id,
    taskId,
    namespace: run.namespace,
    definition: run.definitionName,
    nodeId: action.nodeId,
    iteration: action.iteration,
    attempt: action.attempt,
    title: action.title,
    description: action.description,
    assignees: action.assignees,
    form: action.form,
    deadlineAt: action.deadlineAt,
  });
  const sinks = scope.humanTaskSinks?.of(run.namespace) ?? [];
  scope.writes.outbox.push(
    ...humanTaskEventRows(
      sinks,
      'opened',
      { ...sourceOf(scope, action), taskId },
      {
        title: action.title,
        description: action.description,
        assignees: [...action.assignees],
        deadline_at: action.deadlineAt?.toISOString() ?? null,
      },
      run.now,
    ),
  );
};

/** Where a human task of this run is, for its messages. */
function sourceOf(scope: ActionScope, at: { nodeId: string; iteration: string; attempt: number }) {
  const { run } = scope;
  return {
    runId: run.id,
    namespace: run.namespace,
    definition: run.definitionName,
    version: run.definitionVersion,
    nodeId: at.nodeId,
    iteration: at.iteration,
    attempt: at.attempt,
  };
}

/** A task for people that is over (answered, cancelled, expired). */
export const closeHumanTask: ActionWriter<'close_human_task'> = (scope, action) => {
  const taskId = scope.ids.get(taskKey(action.nodeId, action.iteration));
  if (!taskId) return;
  scope.writes.humanTaskCloses.push({ runId: scope.run.id, taskId, state: action.state });
  if (action.state !== 'expired') return;
  const sinks = scope.humanTaskSinks?.of(scope.run.namespace) ?? [];
  scope.writes.outbox.push(
    ...humanTaskEventRows(sinks, 'expired', { ...sourceOf(scope, action), taskId }, {}, scope.run.now),
  );
};
