import type { Json, TaskError } from '@weft/core';
import type { TaskService } from '../services/tasks/tasks.js';
import type { DispatchTask, LeasedTask } from '../store/records.js';

/** What a consumer needs of the engine's task service (in this process, or a client of a server's API). */
export type DeliveryTarget = Pick<TaskService, 'leaseById' | 'report' | 'heartbeat' | 'terms'>;

/** Runs one leased step; its return value is the step's output, a throw fails the attempt. */
export type StepHandler = (task: LeasedTask) => Json | Promise<Json>;

/** What became of one delivered message. */
export type StepDelivery =
  | { readonly kind: 'ran'; readonly outcome: 'completed' | 'failed' }
  /** Nothing to run: the attempt was not queued any more (a duplicate, stale or deferred message). */
  | { readonly kind: 'skipped' };

/**
 * Runs the step a dispatcher's message names, the way every consumer of a queue dispatcher should: lease
 * the attempt by id (fenced: only a task still queued at that attempt is leased, with a fresh token),
 * run the handler while renewing the lease, and report the outcome with the token. A duplicate or stale
 * message leases nothing and is skipped; acknowledge it either way.
 */
export async function runDelivered(
  tasks: DeliveryTarget,
  message: Omit<DispatchTask, 'notBefore'>,
  options: { readonly worker: string; readonly handler: StepHandler },
): Promise<StepDelivery> {
  const [task] = await tasks.leaseById({
    namespace: message.namespace,
    worker: options.worker,
    taskTypes: [message.taskType],
    tasks: [
      { runId: message.runId, taskId: message.taskId, attempt: message.attempt, taskType: message.taskType },
    ],
  });
  if (!task) return { kind: 'skipped' };
  const held = { runId: task.runId, taskId: task.id, attempt: task.attempt, leaseToken: task.leaseToken };
  const beat = setInterval(() => {
    tasks.heartbeat(message.namespace, options.worker, [held]).catch(() => {});
  }, tasks.terms.heartbeatMs);
  let outcome: { kind: 'completed'; output: Json } | { kind: 'failed'; error: TaskError };
  try {
    outcome = { kind: 'completed', output: await options.handler(task) };
  } catch (e) {
    outcome = {
      kind: 'failed',
      error: { reason: 'error', retryable: true, message: e instanceof Error ? e.message : String(e) },
    };
  } finally {
    clearInterval(beat);
  }
  await tasks.report({
    namespace: message.namespace,
    worker: options.worker,
    reports: [{ ...held, nodeId: task.nodeId, iteration: task.iteration, outcome }],
  });
  return { kind: 'ran', outcome: outcome.kind };
}
