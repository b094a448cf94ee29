import type { WaitNode } from '../../definition/node-types.js';
import type { DecisionContext } from '../context.js';
import { evaluateAt, positionOf } from '../scope.js';
import { putTask } from '../task-rows.js';
import type { NodeHandler, Reach } from './node-handler.js';
import { completeRunning, describeValue, failAtStart } from './outcome.js';

/**
 * A wait holds its branch for a duration, or until a time its `until` expression gives (ISO 8601 text or
 * milliseconds since 1970), counted from the decision's time. It costs one timer row; a time already
 * past lets the branch on at once.
 */
export const waitNode: NodeHandler<WaitNode> = {
  async activate(ctx, node, reach) {
    const { iteration, waiting, arrivals } = reach;
    const due = await dueTime(ctx, node, reach);
    if (!due) return;
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
      await ctx.flow.propagate(node.id, iteration, true);
      return;
    }
    putTask(ctx, node.id, iteration, waiting, { status: 'running', input: { until }, arrivals });
    ctx.emit({ kind: 'set_timer', dueAt: due, purpose: { kind: 'wait', ...at } });
    ctx.record('wait.started', { until }, at);
  },

  /** The wait's timer fired: the branch goes on (a stale timer, for an instance no longer waiting, is noted). */
  async timerFired(ctx, _node, purpose) {
    const task = ctx.task(purpose.nodeId, purpose.iteration);
    if (!task || task.attempt !== purpose.attempt || task.status !== 'running') {
      const { nodeId, iteration, attempt } = purpose;
      ctx.record(
        'timer.ignored',
        { purpose: 'wait', status: task?.status ?? null },
        { nodeId, iteration, attempt },
      );
      return;
    }
    const until = (task.input as { until?: string } | null)?.until ?? null;
    completeRunning(ctx, task, { until });
    await ctx.flow.propagate(purpose.nodeId, purpose.iteration, true);
  },
};

/** When the wait ends: now plus its duration, or the time `until` gives; null once it failed the node. */
async function dueTime(ctx: DecisionContext, node: WaitNode, reach: Reach): Promise<Date | null> {
  if (node.durationMs !== null) return new Date(ctx.now.getTime() + node.durationMs);
  const mapping = ctx.workflow.mapping(node.id, 'until');
  if (!mapping) throw new Error(`wait "${node.id}" has no compiled until expression`);
  const evaluated = await evaluateAt(ctx, mapping, positionOf(ctx, node.id, reach.iteration));
  if (!evaluated.ok) {
    failAtStart(ctx, node.id, reach, evaluated.message);
    return null;
  }
  const parsed = toTime(evaluated.value);
  if (!parsed) {
    const example = 'ISO 8601 text such as "2030-01-01T09:00:00Z", or milliseconds since 1970';
    failAtStart(
      ctx,
      node.id,
      reach,
      `until must give a time (${example}), not ${describeValue(evaluated.value)}`,
    );
    return null;
  }
  return parsed;
}

function toTime(value: unknown): Date | null {
  if (typeof value === 'number' && Number.isFinite(value)) return new Date(value);
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(value)) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}
