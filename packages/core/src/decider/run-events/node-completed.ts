import { noteCompleted } from '../saga.js';
import type { EventHandler } from './event-handler.js';

/**
 * An attempt completed (its output is stored by the shell): recorded, logged for compensation, and
 * control passes on. A stale event, for an attempt that is not the latest or not completed, changes
 * nothing.
 */
export const nodeCompleted: EventHandler<'node_completed'> = async (ctx, event) => {
  const task = ctx.task(event.nodeId, event.iteration);
  if (!task || task.attempt !== event.attempt || task.status !== 'completed') return; // stale
  const at = { nodeId: event.nodeId, iteration: event.iteration, attempt: event.attempt };
  ctx.record('task.completed', { output: task.output }, at);
  if (ctx.run.status !== 'running') return;
  noteCompleted(ctx, event.nodeId, event.iteration);
  await ctx.flow.propagate(event.nodeId, event.iteration, true);
};
