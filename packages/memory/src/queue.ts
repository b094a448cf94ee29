import { ANY_NAMESPACE, type QueueRow } from '@weft/engine';
import { type Op, plus } from './convert.js';
import { key, type QueueEntry } from './state.js';

/** Puts tasks on the queue, available after their delay. */
export function enqueueTasks(op: Op, rows: readonly QueueRow[]): void {
  for (const r of rows) {
    const id = op.s.next('queue');
    op.s.queue.set(op.tx.journal, id, {
      id,
      taskId: r.taskId,
      runId: r.runId,
      namespace: r.namespace,
      taskType: r.taskType,
      priority: r.priority,
      availableAt: plus(op.tx.now, r.delayMs),
      gates: r.gates ? { ...r.gates } : null,
    });
  }
}

/** Queue rows of the request's namespace (every namespace for ANY_NAMESPACE) and task types. */
export function queueRows(op: Op, namespace: string, taskTypes: readonly string[]): QueueEntry[] {
  if (namespace === ANY_NAMESPACE) {
    const types = new Set(taskTypes);
    return [...op.s.queue.values()].filter((q) => types.has(q.taskType));
  }
  return taskTypes.flatMap((t) => op.s.queue.pick(op.s.queueByType.keys(key(namespace, t))));
}

/** Best first: highest priority, then oldest. */
export const byPriority = (a: QueueEntry, b: QueueEntry): number => b.priority - a.priority || a.id - b.id;

/** Task types with a concurrency cap, as `namespace:type`. */
export function cappedTypes(op: Op, namespace: string, taskTypes: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const t of new Set(taskTypes)) {
    if (namespace !== ANY_NAMESPACE) {
      if (op.s.limits.has(key(namespace, 'concurrency', t))) out.add(`${namespace}:${t}`);
      continue;
    }
    for (const l of op.s.limits.values())
      if (l.kind === 'concurrency' && l.name === t) out.add(`${l.namespace}:${t}`);
  }
  return out;
}

/** The highest priority among available queued tasks of each type. */
export function queuedPriorities(
  op: Op,
  namespace: string,
  taskTypes: readonly string[],
): Map<string, number> {
  const out = new Map<string, number>();
  for (const q of queueRows(op, namespace, [...new Set(taskTypes)]))
    if (q.availableAt <= op.tx.now)
      out.set(q.taskType, Math.max(out.get(q.taskType) ?? q.priority, q.priority));
  return out;
}

/** Which of these attempts are still queued. */
export function queuedTasks(
  op: Op,
  tasks: readonly { runId: string; taskId: string; attempt: number }[],
): { runId: string; taskId: string; attempt: number }[] {
  return tasks.filter((r) => {
    const t = op.s.tasks.get(key(r.runId, r.taskId));
    return t !== undefined && t.attempt === r.attempt && t.status === 'queued';
  });
}
