import { taskKey } from '@weft/core';
import type { NewTaskRow, TaskUpdateRow } from '../../store/write-set.js';
import { uuidv7 } from '../../support/ids.js';
import { type ActionWriter, attemptKey, type Mutable } from './action-scope.js';

/** A new attempt: its row, and where it goes when it is queued (a worker, or the dispatcher). */
export const createTask: ActionWriter<'create_task'> = (scope, action) => {
  const { run } = scope;
  const id = uuidv7(run.now.getTime());
  scope.ids.set(taskKey(action.nodeId, action.iteration), id);
  const row: Mutable<NewTaskRow> = {
    id,
    runId: run.id,
    namespace: run.namespace,
    nodeId: action.nodeId,
    iteration: action.iteration,
    attempt: action.attempt,
    status: action.status,
    taskType: action.dispatch?.taskType ?? null,
    priority: action.dispatch?.priority ?? 0,
    timeoutMs: action.dispatch?.timeoutMs ?? null,
    input: action.input,
    output: action.output,
    error: action.error,
    arrivals: action.arrivals,
    lease: null,
  };
  scope.writes.newTasks.push(row);
  scope.touched.set(attemptKey(action), { kind: 'new', row });
  if (action.status === 'queued' && action.dispatch)
    scope.handOver.dispatchRow(run, row, id, action.dispatch);
};

/**
 * A change to an attempt. One statement updates each row at most once, so several changes to one attempt
 * in a pass are merged into a single row (into its insert, if this pass creates it).
 */
export const updateTask: ActionWriter<'update_task'> = (scope, action) => {
  const { run } = scope;
  const id = scope.ids.get(taskKey(action.nodeId, action.iteration));
  const dispatch =
    action.status === 'queued' || action.status === 'running' ? (action.dispatch ?? null) : null;
  const row: Mutable<NewTaskRow> | Mutable<TaskUpdateRow> =
    scope.touched.get(attemptKey(action))?.row ??
    (() => {
      const fresh: Mutable<TaskUpdateRow> = {
        runId: run.id,
        nodeId: action.nodeId,
        iteration: action.iteration,
        attempt: action.attempt,
        expect: action.expect,
        status: action.status,
        lease: null,
      };
      scope.writes.taskUpdates.push(fresh);
      scope.touched.set(attemptKey(action), { kind: 'update', row: fresh });
      return fresh;
    })();
  row.status = action.status;
  if (action.input !== undefined) row.input = action.input;
  if (action.output !== undefined) row.output = action.output;
  if (action.error !== undefined) row.error = action.error;
  if (action.arrivals !== undefined) row.arrivals = action.arrivals;
  if (dispatch) {
    row.taskType = dispatch.taskType;
    row.priority = dispatch.priority;
    row.timeoutMs = dispatch.timeoutMs;
    if (id && action.status === 'queued') scope.handOver.dispatchRow(run, row, id, dispatch);
  }
};

/** An existing queued attempt put (back) on the queue. */
export const dispatchTask: ActionWriter<'dispatch_task'> = (scope, action) => {
  const id = scope.ids.get(taskKey(action.nodeId, action.iteration));
  if (id)
    scope.handOver.queue(
      scope.run,
      id,
      action.attempt,
      action.dispatch,
      scope.handOver.gatesOf(scope.run, action.nodeId, action.dispatch.limitKey),
    );
};
