import type { DispatchTask } from '@weft/engine';
import { byText, type Op, plus } from './convert.js';
import { key } from './state.js';

/**
 * Queued attempts of running or compensating runs (compensations are tasks too) that have no row on the table queue, queued at least `olderThanMs` ago
 * (or, with `runIds`, every such attempt of those runs), oldest first: what a dispatcher that enqueues
 * after commit may have lost to a crash between commit and enqueue (the Postgres store's
 * `undispatchedTasks`). A held-back retry's not-before time comes with it.
 */
export function undispatchedTasks(
  op: Op,
  filter: { readonly olderThanMs: number; readonly limit: number; readonly runIds?: readonly string[] },
): DispatchTask[] {
  const now = op.tx.now;
  const cutoff = plus(now, -filter.olderThanMs);
  const onQueue = new Set<string>();
  for (const q of op.s.queue.values()) onQueue.add(key(q.runId, q.taskId));
  const live = (status: string | undefined) => status === 'running' || status === 'compensating';
  const runIds = filter.runIds
    ? filter.runIds.filter((id) => live(op.s.runs.get(id)?.status))
    : [...op.s.runs.values()].filter((r) => live(r.status)).map((r) => r.id);
  const found = runIds.flatMap((runId) =>
    op.s.tasks
      .pick(op.s.tasksByRun.keys(runId))
      .filter(
        (t) =>
          t.status === 'queued' &&
          t.taskType !== null &&
          (t.retryAt ?? t.createdAt) <= cutoff &&
          !onQueue.has(key(t.runId, t.id)),
      ),
  );
  found.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || byText(a.id, b.id));
  return found.slice(0, filter.limit).map((t) => {
    const run = op.s.runs.get(t.runId)!;
    return {
      taskId: t.id,
      runId: t.runId,
      attempt: t.attempt,
      namespace: run.namespace,
      taskType: t.taskType!,
      priority: t.priority,
      notBefore: t.retryAt !== null && t.retryAt > now ? t.retryAt : null,
    };
  });
}
