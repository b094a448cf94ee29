import { finishRows } from '../outbox-rows.js';
import type { ActionWriter } from './action-scope.js';

/** The run's end: its row, its parent's event and wake-up, its status callback, and the report. */
export const finishRun: ActionWriter<'finish_run'> = (scope, action) => {
  scope.report.finish(scope.run, action);
  scope.updateRun({
    status: action.status,
    output: action.output,
    error: action.error,
    finished: true,
    reopened: false,
  });
  const announce = finishRows(scope.run, action.status, action.output, action.error, scope.workflow);
  scope.writes.inboxAppend.push(...announce.inbox);
  scope.writes.outbox.push(...announce.outbox);
};

/** Pause, resume or compensate; a reopened run loses its outcome. */
export const setRunStatus: ActionWriter<'set_run_status'> = (scope, action) => {
  scope.updateRun({
    status: action.status,
    ...(action.reopen ? { output: null, error: null, finished: false, reopened: true } : {}),
  });
};

/** Run variables, merged with those set earlier in the pass. */
export const setVars: ActionWriter<'set_vars'> = (scope, action) => {
  scope.updateRun({ vars: { ...scope.runUpdate()?.vars, ...action.values } });
};

/** Search attributes of the run, set by a transform node. */
export const setAttributes: ActionWriter<'set_attributes'> = (scope, action) => {
  scope.writes.attributes.push({
    runId: scope.run.id,
    namespace: scope.run.namespace,
    values: action.values,
  });
};

/** More of the run's last nodes have finished. */
export const addSinksDone: ActionWriter<'add_sinks_done'> = (scope, action) => {
  scope.updateRun({ sinksDelta: (scope.runUpdate()?.sinksDelta ?? 0) + action.count });
};

/** The run's open work stops; tasks this pass handed straight to a worker are taken back. */
export const cancelOpenWork: ActionWriter<'cancel_open_work'> = (scope, action) => {
  scope.writes.cancelOpenWork.push({
    runId: scope.run.id,
    reason: action.reason,
    mode: action.mode ?? 'cancel',
  });
  scope.handOver.withdraw(scope.run.id);
};

/**
 * Another decision on the run after this transaction. In a transaction that claimed this run's
 * decide-queue row: the same row, so the rule "claim or upsert, never both for different runs" holds.
 */
export const requestDecision: ActionWriter<'request_decision'> = (scope) => {
  scope.requestDecision();
};

/** An event kept in the run's inbox for a later decision. */
export const defer: ActionWriter<'defer'> = (scope, action) => {
  scope.writes.inboxAppend.push({ runId: scope.run.id, event: action.event });
};

/** A history event, numbered after the run's last one. */
export const record: ActionWriter<'record'> = (scope, action) => {
  scope.seq += 1;
  scope.writes.history.push({
    runId: scope.run.id,
    seq: scope.seq,
    type: action.type,
    nodeId: action.nodeId ?? null,
    iteration: action.iteration ?? null,
    attempt: action.attempt ?? null,
    data: action.data,
  });
  scope.report.event(scope.run, scope.writes.history.at(-1)!);
};
