import { handlerOf } from '../nodes/node-table.js';
import type { EventHandler } from './event-handler.js';
import { scheduleRetry } from './retry.js';

/**
 * A timer fired. A retry timer schedules the attempt it waited for (unless that attempt moved on); any
 * other timer belongs to its node (a wait's end, a signal's timeout, a human task's deadline) and goes to
 * the node kind's handler.
 */
export const timerFired: EventHandler<'timer_fired'> = async (ctx, { purpose }) => {
  if (ctx.run.status !== 'running') return;
  if (purpose.kind !== 'retry') {
    const node = ctx.workflow.node(purpose.nodeId);
    await handlerOf(node).timerFired?.(ctx, node, purpose);
    return;
  }
  const { nodeId, iteration, attempt } = purpose;
  const task = ctx.task(nodeId, iteration);
  if (!task || task.attempt !== attempt || (task.status !== 'failed' && task.status !== 'timed_out')) return;
  await scheduleRetry(ctx, nodeId, iteration, attempt, task.input);
};
