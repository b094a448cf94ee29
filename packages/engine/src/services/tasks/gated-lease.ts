import type { NamedTask } from '../../dispatch/dispatcher.js';
import type { Gate } from '../../extensions/gate.js';
import { callRelease } from '../../extensions/gate-slots.js';
import type { LeasedTask } from '../../store/records.js';
import type { LeaseOutcome, LeaseRequest } from '../../store/store.js';
import { emptyWriteSet, type QueueRow } from '../../store/write-set.js';
import type { TaskDeps } from './task-deps.js';

const later = (a: Date | null, ms: number) => {
  const at = new Date(Date.now() + Math.max(0, ms));
  return a === null || at < a ? at : a;
};

/**
 * The table poll path with a gate: for each task type, ask the gate before every claim, then lease one task
 * of that type. A deferral leaves the queue untouched (the step stays queued) and tells the poll when to look
 * again; a claim that gets nothing (the queue was empty, or another worker won the task) releases the slot at
 * once (test: "a claim loser releases its gate slot (six servers lease one message at once)").
 */
export async function leaseThroughGate(
  ctx: Pick<TaskDeps, 'store' | 'extensions' | 'logger' | 'dispatchMode'>,
  gate: Gate,
  request: LeaseRequest,
): Promise<LeaseOutcome> {
  const slots = ctx.extensions.slots;
  const tasks: LeasedTask[] = [];
  let retryAt: Date | null = null;
  for (const taskType of request.taskTypes) {
    while (tasks.length < request.max) {
      const decision = await gate.acquire({
        namespace: request.namespace,
        taskType,
        worker: request.worker,
        task: null,
      });
      if (decision.kind === 'defer') {
        retryAt = later(retryAt, decision.retryAfterMs);
        break;
      }
      let got: LeaseOutcome;
      try {
        got = await ctx.store.transaction((tx) =>
          tx.leaseTasks({ ...request, taskTypes: [taskType], max: 1 }),
        );
      } catch (e) {
        await callRelease(decision.release, ctx.logger);
        throw e;
      }
      if (got.retryAt && (retryAt === null || got.retryAt < retryAt)) retryAt = got.retryAt;
      const task = got.tasks[0];
      if (!task) {
        await callRelease(decision.release, ctx.logger);
        break;
      }
      slots.hold({ runId: task.runId, taskId: task.id, attempt: task.attempt, release: decision.release });
      tasks.push(task);
    }
  }
  return { tasks, retryAt };
}

/**
 * A lease by id with a gate: the gate is asked for each named attempt before the claim. Admitted attempts
 * are leased (fenced: only a task still queued at that attempt); an admitted attempt that is not leased
 * lost its claim, or was stale, and its slot is released at once. A deferred attempt is not claimed and
 * is offered again after the gate's delay: a queue dispatcher gets a message with that not-before time;
 * with Weft's own rows the task goes on the table queue, held back until then.
 */
export async function leaseByIdThroughGate(
  ctx: Pick<TaskDeps, 'store' | 'extensions' | 'logger' | 'dispatchMode'>,
  gate: Gate,
  request: { readonly namespace: string; readonly worker: string; readonly tasks: readonly NamedTask[] },
  lease: (tasks: readonly NamedTask[]) => Promise<LeasedTask[]>,
): Promise<LeasedTask[]> {
  const admitted: { task: NamedTask; release: () => void | Promise<void> }[] = [];
  const deferred: { task: NamedTask; retryAfterMs: number }[] = [];
  for (const task of request.tasks) {
    const decision = await gate.acquire({
      namespace: request.namespace,
      taskType: task.taskType ?? null,
      worker: request.worker,
      task: { runId: task.runId, taskId: task.taskId, attempt: task.attempt },
    });
    if (decision.kind === 'admit') admitted.push({ task, release: decision.release });
    else deferred.push({ task, retryAfterMs: decision.retryAfterMs });
  }
  let leased: LeasedTask[] = [];
  try {
    leased = admitted.length > 0 ? await lease(admitted.map((a) => a.task)) : [];
  } finally {
    const won = new Set(leased.map((t) => `${t.id}/${t.attempt}`));
    for (const a of admitted) {
      if (won.has(`${a.task.taskId}/${a.task.attempt}`))
        ctx.extensions.slots.hold({ ...a.task, release: a.release });
      else await callRelease(a.release, ctx.logger);
    }
  }
  if (deferred.length > 0) await offerLater(ctx, deferred);
  return leased;
}

/** Sends deferred attempts again after their delay, through the dispatcher in use. */
async function offerLater(
  ctx: Pick<TaskDeps, 'store' | 'extensions' | 'logger' | 'dispatchMode'>,
  deferred: readonly { task: NamedTask; retryAfterMs: number }[],
): Promise<void> {
  // The message may lack the type, and a poll of the server's own runner has no single namespace: read
  // both from the store (a rare path: only deferred attempts).
  const now = Date.now();
  const rows: QueueRow[] = [];
  for (const { task, retryAfterMs } of deferred) {
    const [run, tasks] = await Promise.all([ctx.store.getRun(task.runId), ctx.store.listTasks(task.runId)]);
    const row = tasks.find((t) => t.id === task.taskId && t.attempt === task.attempt);
    if (!run || !row || row.status !== 'queued' || row.taskType === null) continue; // moved on: nothing to offer
    rows.push({
      taskId: task.taskId,
      runId: task.runId,
      attempt: task.attempt,
      namespace: run.namespace,
      taskType: row.taskType,
      priority: row.priority,
      delayMs: Math.max(0, Math.round(retryAfterMs)),
    });
  }
  if (rows.length === 0) return;
  const mode = ctx.dispatchMode;
  if (mode.kind !== 'rows') {
    await mode.dispatcher.enqueue(
      rows.map((r) => ({
        taskId: r.taskId,
        runId: r.runId,
        attempt: r.attempt,
        namespace: r.namespace,
        taskType: r.taskType,
        priority: r.priority,
        notBefore: new Date(now + r.delayMs),
      })),
    );
    return;
  }
  // Weft's own dispatchers: a held-back row on the table queue (a lease by id never takes a task that
  // has one, so the task is leased once, by a poll, when the row comes due).
  const writes = emptyWriteSet();
  writes.queue.push(...rows);
  await ctx.store.transaction((tx) => tx.write(writes));
}
