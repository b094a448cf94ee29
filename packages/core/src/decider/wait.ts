import type { WaitNode } from '../definition/node-types.js';
import type { DecisionContext } from './context.js';
import { propagate, putTask } from './flow.js';
import { completeRunning, describeValue, failAtStart } from './outcome.js';
import { evaluateAt, positionOf } from './scope.js';
import type { Arrival, TaskState } from './state.js';

/**
 * A wait holds its branch for a duration, or until a time its `until` expression gives (ISO 8601 text or
 * milliseconds since 1970), counted from the decision's time. It costs one timer row; a time already
 * past lets the branch on at once.
 */
export async function activateWait(
  ctx: DecisionContext,
  node: WaitNode,
  iteration: string,
  waiting: TaskState | null,
  arrivals: readonly Arrival[],
): Promise<void> {
  let due: Date;
  if (node.durationMs !== null) {
    due = new Date(ctx.now.getTime() + node.durationMs);
  } else {
    const mapping = ctx.workflow.mapping(node.id, 'until');
    if (!mapping) throw new Error(`wait "${node.id}" has no compiled until expression`);
    const evaluated = await evaluateAt(ctx, mapping, positionOf(ctx, node.id, iteration));
    if (!evaluated.ok) {
      failAtStart(ctx, node.id, iteration, waiting, arrivals, evaluated.message);
      return;
    }
    const parsed = toTime(evaluated.value);
    if (!parsed) {
      failAtStart(
        ctx,
        node.id,
        iteration,
        waiting,
        arrivals,
        `until must give a time (ISO 8601 text such as "2030-01-01T09:00:00Z", or milliseconds since 1970), not ${describeValue(evaluated.value)}`,
      );
      return;
    }
    due = parsed;
  }
  const until = due.toISOString();
  const at = { nodeId: node.id, iteration, attempt: waiting?.attempt ?? 1 };
  if (due.getTime() <= ctx.now.getTime()) {
    putTask(ctx, node.id, iteration, waiting, {
      status: 'completed',
      input: { until },
      output: { until },
      arrivals,
    });
    ctx.record('wait.finished', { until, already_past: true }, at);
    await propagate(ctx, node.id, iteration, true);
    return;
  }
  putTask(ctx, node.id, iteration, waiting, { status: 'running', input: { until }, arrivals });
  ctx.emit({ kind: 'set_timer', dueAt: due, purpose: { kind: 'wait', ...at } });
  ctx.record('wait.started', { until }, at);
}

/** The wait's timer fired: the branch goes on (a stale timer, for an instance no longer waiting, is noted). */
export async function onWaitTimer(
  ctx: DecisionContext,
  purpose: { nodeId: string; iteration: string; attempt: number },
): Promise<void> {
  const task = ctx.task(purpose.nodeId, purpose.iteration);
  if (!task || task.attempt !== purpose.attempt || task.status !== 'running') {
    ctx.record('timer.ignored', { purpose: 'wait', status: task?.status ?? null }, purpose);
    return;
  }
  const until = (task.input as { until?: string } | null)?.until ?? null;
  completeRunning(ctx, task, { until });
  await propagate(ctx, purpose.nodeId, purpose.iteration, true);
}

function toTime(value: unknown): Date | null {
  if (typeof value === 'number' && Number.isFinite(value)) return new Date(value);
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(value)) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}
