import type { NamedTask } from '../../dispatch/dispatcher.js';
import type { LeasedTask } from '../../store/records.js';
import type { TaskDeps } from './task-deps.js';

/**
 * Leases attempts named by messages (a lease by id), in one transaction: only tasks still queued at the
 * named attempt are leased, with a fresh fencing token. A task of a type capped since it was announced is
 * moved to the table queue instead, and polls waiting for its type are woken.
 */
export async function leaseNamed(
  ctx: Pick<TaskDeps, 'store' | 'wakeups' | 'config'>,
  request: { readonly namespace: string; readonly worker: string; readonly taskTypes: readonly string[] },
  named: readonly NamedTask[],
): Promise<LeasedTask[]> {
  if (named.length === 0) return [];
  const { tasks, moved } = await ctx.store.transaction((tx) =>
    tx.leaseTasksById(
      {
        namespace: request.namespace,
        taskTypes: request.taskTypes,
        max: named.length,
        worker: request.worker,
        leaseMs: ctx.config.leaseMs,
      },
      named.map((t) => ({ runId: t.runId, taskId: t.taskId, attempt: t.attempt })),
    ),
  );
  if (moved.length > 0)
    ctx.wakeups.announce(
      moved.map((m) => ({ kind: 'tasks', namespace: m.namespace, taskTypes: [m.taskType] })),
    );
  return tasks;
}
