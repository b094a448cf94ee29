import { ANY_NAMESPACE, type LeasedTask, type LeaseRequest, TASKS_DESTINATION } from '@weft/engine';
import { claimTask } from './claim.js';
import type { Op } from './convert.js';
import { enqueueTasks } from './queue.js';
import { key, type TaskRow } from './state.js';

/**
 * Leases named tasks (named by a message from outside the store). Only tasks still queued at the named
 * attempt are leased. A task of a capped type is moved to the table queue instead, where the gated path
 * counts it; a task with a queue row is never leased here. Messages of leased or moved tasks in the
 * outbox need no more sending and are deleted.
 */
export function leaseTasksById(
  op: Op,
  request: LeaseRequest,
  named: readonly { runId: string; taskId: string; attempt: number }[],
): { tasks: LeasedTask[]; moved: { namespace: string; taskType: string }[] } {
  const types = new Set(request.taskTypes);
  const tasks: LeasedTask[] = [];
  const settled = new Set<string>();
  const movable: { t: TaskRow; namespace: string }[] = [];
  for (const n of named) {
    const t = op.s.tasks.get(key(n.runId, n.taskId));
    const run = t && op.s.runs.get(t.runId);
    if (!t || !run || t.attempt !== n.attempt || t.status !== 'queued' || run.status === 'paused') continue;
    if (t.taskType === null || !types.has(t.taskType)) continue;
    if (request.namespace !== ANY_NAMESPACE && run.namespace !== request.namespace) continue;
    const onTable = op.s.queue
      .pick(op.s.queueByType.keys(key(run.namespace, t.taskType)))
      .some((q) => q.runId === t.runId && q.taskId === t.id);
    if (onTable) continue;
    if (op.s.limits.has(key(run.namespace, 'concurrency', t.taskType))) {
      if (op.locks.take(op.tx, `task:${t.runId}:${t.id}`, 'wait'))
        movable.push({ t, namespace: run.namespace });
      settled.add(key(t.runId, t.id));
      continue;
    }
    const leased = claimTask(op, t.runId, t.id, request);
    if (leased) {
      tasks.push(leased);
      settled.add(key(t.runId, t.id));
    }
  }
  for (const o of [...op.s.outbox.values()])
    if (
      o.destination === TASKS_DESTINATION &&
      o.status === 'pending' &&
      o.taskId !== null &&
      settled.has(key(o.runId, o.taskId)) &&
      op.locks.take(op.tx, `outbox:${o.id}`, 'skip')
    )
      op.s.outbox.delete(op.tx.journal, o.id);
  const moved = new Map<string, { namespace: string; taskType: string }>();
  for (const { t, namespace } of movable) {
    enqueueTasks(op, [
      {
        taskId: t.id,
        runId: t.runId,
        attempt: t.attempt,
        namespace,
        taskType: t.taskType!,
        priority: t.priority,
        delayMs: 0,
      },
    ]);
    moved.set(`${namespace}:${t.taskType}`, { namespace, taskType: t.taskType! });
  }
  return { tasks, moved: [...moved.values()] };
}
