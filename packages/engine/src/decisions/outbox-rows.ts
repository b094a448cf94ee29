import {
  type Effect,
  type EventMessage,
  type Json,
  type RunError,
  type RunEvent,
  type RunStatus,
  stableId,
  type Workflow,
} from '@weft/core';
import {
  type OutboxWrite,
  RUNS_DESTINATION,
  sinkDestination,
  TASKS_DESTINATION,
  WEBHOOK_DESTINATION,
} from '../store/outbox-records.js';
import type { LockedRun } from '../store/records.js';
import type { QueueRow } from '../store/write-set.js';

/** The outbox row for an effect a decision emitted. */
export function effectRow(run: LockedRun, effect: Effect, taskId: string | null): OutboxWrite {
  switch (effect.kind) {
    case 'start_run':
      return {
        runId: run.id,
        namespace: run.namespace,
        taskId,
        destination: RUNS_DESTINATION,
        messageId: `start:${effect.runId}`,
        payload: {
          kind: 'start_run',
          runId: effect.runId,
          namespace: run.namespace,
          definition: effect.definition,
          version: effect.version,
          input: effect.input,
          parent: effect.parent,
          detached: effect.detached,
        },
      };
    case 'publish':
      return {
        runId: run.id,
        namespace: run.namespace,
        taskId,
        destination: sinkDestination(effect.sink),
        messageId: effect.message.id,
        payload: {
          kind: 'publish',
          topic: effect.topic,
          message: { ...effect.message, source: { namespace: run.namespace, ...effect.message.source } },
        },
      };
  }
}

/** What a run's end writes besides the run row: the parent's event and wake-up, and the status callback. */
export interface FinishWrites {
  readonly inbox: { runId: string; event: RunEvent }[];
  readonly outbox: OutboxWrite[];
}

type FinalStatus = Extract<RunStatus, 'completed' | 'failed' | 'cancelled' | 'terminated'>;

/**
 * The writes that announce a run's end, in the transaction that ends it.
 *
 * A child's outcome goes straight into its parent's inbox, so it exists exactly when the child's end commits:
 * a parent is never woken for a child whose completion rolled back (invariant 7; test: "a child whose
 * completion rolls back does not wake its parent"). The parent's decide-queue row is asked for through the
 * outbox (`wake_run`), not upserted here: this transaction has claimed the child's decide-queue row, and
 * upserting another run's row as well could wait on a transaction that waits on us (docs/contributing.md: a
 * transaction claims or upserts decide-queue rows, never both).
 */
export function finishRows(
  run: LockedRun,
  status: FinalStatus,
  output: Json | null,
  error: RunError | null,
  workflow: Workflow | undefined,
): FinishWrites {
  const inbox: FinishWrites['inbox'] = [];
  const outbox: OutboxWrite[] = [];
  const parent = run.parent;
  if (parent && !parent.detached) {
    inbox.push({
      runId: parent.runId,
      event: {
        kind: 'child_finished',
        nodeId: parent.nodeId,
        iteration: parent.iteration,
        attempt: parent.attempt,
        childRunId: run.id,
        status,
        output: status === 'completed' ? output : null,
        error,
      },
    });
    outbox.push({
      runId: run.id,
      namespace: run.namespace,
      taskId: null,
      destination: RUNS_DESTINATION,
      messageId: `wake:${parent.runId}:${run.id}`,
      payload: { kind: 'wake_run', runId: parent.runId, reason: `child run ${status}` },
    });
  }
  const callback = workflow?.definition.onStatus;
  if (callback?.statuses.includes(status))
    outbox.push(statusCallbackRow(run, status, output, error, callback));
  return { inbox, outbox };
}

/** The outbox row of a run's status callback: to a URL (signed webhook) or to a sink. */
function statusCallbackRow(
  run: LockedRun,
  status: FinalStatus,
  output: Json | null,
  error: RunError | null,
  callback: NonNullable<Workflow['definition']['onStatus']>,
): OutboxWrite {
  const message: EventMessage = {
    // The decision's time too: a run retried by an operator may end with the same status again.
    id: stableId('weft.status', run.id, status, run.now.toISOString()),
    type: `run.${status}`,
    time: run.now.toISOString(),
    source: {
      namespace: run.namespace,
      run_id: run.id,
      definition: run.definitionName,
      version: run.definitionVersion,
    },
    data: { status, output, error: error as unknown as Json },
  };
  const base = { runId: run.id, namespace: run.namespace, taskId: null, messageId: message.id };
  return callback.kind === 'url'
    ? { ...base, destination: WEBHOOK_DESTINATION, payload: { kind: 'webhook', url: callback.url, message } }
    : {
        ...base,
        destination: sinkDestination(callback.sink),
        payload: { kind: 'publish', topic: null, message },
      };
}

/** The outbox row that carries a queued task to an external queue (the Redis dispatcher). */
export function taskMessageRow(task: QueueRow): OutboxWrite {
  return {
    runId: task.runId,
    namespace: task.namespace,
    taskId: task.taskId,
    destination: TASKS_DESTINATION,
    messageId: `task:${task.taskId}:${task.attempt}`,
    payload: {
      kind: 'task_message',
      taskId: task.taskId,
      runId: task.runId,
      attempt: task.attempt,
      namespace: task.namespace,
      taskType: task.taskType,
      priority: task.priority,
    },
  };
}
