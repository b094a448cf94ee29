import type { Json } from '../../json.js';
import { retryDelayMs } from '../backoff.js';
import type { EventHandler } from './event-handler.js';
import { retryPolicyOf, scheduleRetry } from './retry.js';

/**
 * An attempt failed. A retryable error with attempts left schedules the next attempt by the node's policy
 * (at once, queued with a not-before time, or after a retry timer); otherwise the run fails, naming the
 * node and the error.
 */
export const nodeFailed: EventHandler<'node_failed'> = async (ctx, event) => {
  const task = ctx.task(event.nodeId, event.iteration);
  if (!task || task.attempt !== event.attempt) return; // stale
  const at = { nodeId: event.nodeId, iteration: event.iteration, attempt: event.attempt };
  const running = ctx.run.status === 'running';
  const node = ctx.workflow.node(event.nodeId);
  const policy = retryPolicyOf(node);
  const canRetry = running && event.error.retryable && policy !== null && event.attempt < policy.maxAttempts;
  if (!canRetry) {
    ctx.record('task.failed', { error: event.error as unknown as Json, final: true }, at);
    if (!running) return;
    const why =
      event.error.reason === 'error'
        ? event.error.message
        : `${event.error.reason.replace('_', ' ')}: ${event.error.message}`;
    const tries = event.attempt > 1 ? ` after ${event.attempt} attempts` : '';
    ctx.flow.failRun({
      message: `node "${event.nodeId}" failed${tries}: ${why}`,
      node: event.nodeId,
      reason: event.error.reason,
    });
    return;
  }
  const delayMs = retryDelayMs(policy, event.attempt);
  const failed = { error: event.error as unknown as Json, final: false, retry_in_ms: delayMs };
  ctx.record('task.failed', failed, at);
  if (delayMs === 0) {
    await scheduleRetry(ctx, event.nodeId, event.iteration, event.attempt, task.input);
    return;
  }
  if (ctx.options.retryOnQueue && node.kind === 'task') {
    // The attempt is queued now with a not-before time, and the dispatcher holds it back.
    await scheduleRetry(ctx, event.nodeId, event.iteration, event.attempt, task.input, delayMs);
    return;
  }
  ctx.emit({
    kind: 'set_timer',
    dueAt: new Date(ctx.now.getTime() + delayMs),
    purpose: { kind: 'retry', ...at },
  });
};
