import {
  type HistoryRecord,
  type LeasedTask,
  NO_PROGRESS,
  type OutboxRow,
  type RunProgress,
  type RunRecord,
  type TaskRecord,
} from '@weft/engine';

/** The HTTP API speaks snake_case JSON; these turn records into what it sends. */

/** A run as the API shows it. */
export function runJson(run: RunRecord) {
  return {
    id: run.id,
    namespace: run.namespace,
    definition: run.definitionName,
    version: run.definitionVersion,
    status: run.status,
    input: run.input,
    output: run.output,
    error: run.error,
    created_at: run.createdAt.toISOString(),
    finished_at: run.finishedAt?.toISOString() ?? null,
    progress: progressJson(run.progress ?? NO_PROGRESS),
    ...(run.attributes !== undefined ? { attributes: run.attributes ?? {} } : {}),
    parent: run.parent
      ? {
          run_id: run.parent.runId,
          node_id: run.parent.nodeId,
          iteration: run.parent.iteration,
          attempt: run.parent.attempt,
          detached: run.parent.detached,
        }
      : null,
  };
}

/** A run's progress as the API shows it: its steps known so far, completed, failed and running. */
export function progressJson(p: RunProgress) {
  return { known: p.known, completed: p.completed, failed: p.failed, running: p.running };
}

/** One attempt of a node as the API shows it. */
export function taskJson(task: TaskRecord) {
  return {
    id: task.id,
    node_id: task.nodeId,
    iteration: task.iteration,
    attempt: task.attempt,
    status: task.status,
    task_type: task.taskType,
    input: task.input,
    output: task.output,
    error: task.error,
    worker: task.worker,
    created_at: task.createdAt.toISOString(),
    started_at: task.startedAt?.toISOString() ?? null,
    finished_at: task.finishedAt?.toISOString() ?? null,
    lease_expires_at: task.leaseExpiresAt?.toISOString() ?? null,
    deadline_at: task.deadlineAt?.toISOString() ?? null,
    child_run_id: task.childRunId ?? null,
  };
}

/** A history event as the API shows it. */
export function historyJson(event: HistoryRecord) {
  return {
    seq: event.seq,
    type: event.type,
    node_id: event.nodeId,
    iteration: event.iteration,
    attempt: event.attempt,
    data: event.data,
    at: event.at.toISOString(),
  };
}

/** A leased task as a worker receives it. */
export function leasedJson(task: LeasedTask) {
  return {
    task_id: task.id,
    run_id: task.runId,
    node_id: task.nodeId,
    iteration: task.iteration,
    attempt: task.attempt,
    task_type: task.taskType,
    definition: task.definitionName,
    input: task.input,
    lease_token: task.leaseToken,
    lease_expires_at: task.leaseExpiresAt.toISOString(),
    deadline_at: task.deadlineAt?.toISOString() ?? null,
    // The same for every attempt of the node instance, unlike task_id: what a worker gives a payment provider.
    idempotency_key: task.idempotencyKey,
    // What the engine's stepContext hook built for the handler, when it has one.
    ...(task.context !== undefined ? { context: task.context } : {}),
    // The W3C trace context the worker opens its handler's span under (the task's lease span).
    ...(task.traceContext ? { traceparent: task.traceContext } : {}),
  };
}

/** A dead-lettered outbox message as the API shows it. */
export function deadLetterJson(row: OutboxRow) {
  return {
    id: row.id,
    destination: row.destination,
    kind: row.payload.kind,
    message_id: row.messageId,
    run_id: row.runId,
    task_id: row.taskId,
    attempts: row.attempts,
    last_error: row.lastError,
    created_at: row.createdAt.toISOString(),
    dead_at: row.deadAt?.toISOString() ?? null,
    payload: row.payload,
  };
}
