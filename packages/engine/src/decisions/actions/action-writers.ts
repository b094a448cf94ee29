import type { Action } from '@weft/core';
import type { ActionScope, ActionWriter } from './action-scope.js';
import { closeHumanTask, openHumanTask, putMailbox, setTimer, writeEffect } from './row-actions.js';
import {
  addSinksDone,
  cancelOpenWork,
  defer,
  finishRun,
  record,
  requestDecision,
  setAttributes,
  setRunStatus,
  setVars,
} from './run-actions.js';
import { createTask, dispatchTask, updateTask } from './task-actions.js';

/** How each kind of action a decision emits becomes writes: one function per kind. */
export const ACTION_WRITERS: { readonly [K in Action['kind']]: ActionWriter<K> } = {
  create_task: createTask,
  update_task: updateTask,
  dispatch_task: dispatchTask,
  effect: writeEffect,
  set_timer: setTimer,
  cancel_open_work: cancelOpenWork,
  finish_run: finishRun,
  set_run_status: setRunStatus,
  request_decision: requestDecision,
  defer,
  set_vars: setVars,
  set_attributes: setAttributes,
  put_mailbox: putMailbox,
  add_sinks_done: addSinksDone,
  open_human_task: openHumanTask,
  close_human_task: closeHumanTask,
  record,
};

/** Turns one action into writes, through the writer of its kind. */
export function writeAction(scope: ActionScope, action: Action): void {
  // The table pairs each kind with the writer of that kind, so the action fits the writer it selects.
  const write = ACTION_WRITERS[action.kind] as (scope: ActionScope, action: Action) => void;
  write(scope, action);
}
