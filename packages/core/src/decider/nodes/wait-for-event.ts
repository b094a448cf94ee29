import type { WaitForEventNode } from '../../definition/node-types.js';
import { formatDuration } from '../../duration.js';
import type { Json } from '../../json.js';
import type { DecisionContext } from '../context.js';
import { signalEdgeTargets } from '../labelled-edges.js';
import type { SignalWaiter } from '../mailbox.js';
import { evaluateAt, positionOf } from '../scope.js';
import { putTask } from '../task-rows.js';
import type { NodeHandler, Reach } from './node-handler.js';
import { completeRunning, describeValue, failAtStart, failRunning } from './outcome.js';

/**
 * A wait_for_event node waits for a signal through the run's mailbox for the signal's name and
 * correlation key; signals themselves are decided by run-events/signal-received.ts. Both are decided
 * under the run's row lock, so whatever order they come in, each signal is taken by exactly one waiting
 * node or kept, and a node that times out is never also given a signal:
 *
 * - a node that starts waiting takes the oldest kept signal, or joins the waiters (and arms its timeout);
 * - a timeout finds the node still waiting (it takes the `on: timeout` edges, or fails the node), or
 *   finds it already given a signal, and does nothing.
 */
export const waitForEventNode: NodeHandler<WaitForEventNode> = {
  async activate(ctx, node, reach) {
    const { iteration, waiting, arrivals } = reach;
    const correlation = await correlationOf(ctx, node, reach);
    if (correlation === null) return;
    const box = ctx.mailbox(node.event, correlation);
    const attempt = waiting?.attempt ?? 1;
    const at = { nodeId: node.id, iteration, attempt };
    const input = { event: node.event, correlation: correlation === '' ? null : correlation };
    const kept = box.buffered[0];
    if (kept) {
      ctx.emit({ kind: 'put_mailbox', mailbox: { ...box, buffered: box.buffered.slice(1) } });
      putTask(ctx, node.id, iteration, waiting, { status: 'completed', input, output: kept.data, arrivals });
      ctx.record('signal.delivered', { signal_id: kept.id, name: node.event, kept_since: kept.at }, at);
      await ctx.flow.propagate(node.id, iteration, true, signalEdgeTargets(ctx, node.id, false));
      return;
    }
    const timeoutAt = node.timeoutMs === null ? null : new Date(ctx.now.getTime() + node.timeoutMs);
    putTask(ctx, node.id, iteration, waiting, {
      status: 'running',
      input: { ...input, timeout_at: timeoutAt?.toISOString() ?? null },
      arrivals,
    });
    const waiter: SignalWaiter = at;
    ctx.emit({ kind: 'put_mailbox', mailbox: { ...box, waiters: [...box.waiters, waiter] } });
    if (timeoutAt)
      ctx.emit({ kind: 'set_timer', dueAt: timeoutAt, purpose: { kind: 'event_timeout', ...at } });
    ctx.record('signal.waiting', { ...input, timeout_at: timeoutAt?.toISOString() ?? null }, at);
  },

  /** The timeout passed: take the timeout edges, or fail the node. */
  async timerFired(ctx, node, purpose) {
    const at = { nodeId: purpose.nodeId, iteration: purpose.iteration, attempt: purpose.attempt };
    const task = ctx.task(purpose.nodeId, purpose.iteration);
    if (!task || task.attempt !== purpose.attempt || task.status !== 'running') {
      // The signal came first (or the run moved on): the timeout is over and done with.
      ctx.record('timer.ignored', { purpose: 'event_timeout', status: task?.status ?? null }, at);
      return;
    }
    const input = task.input as { correlation?: string | null } | null;
    const box = ctx.mailbox(node.event, input?.correlation ?? '');
    const waiters = box.waiters.filter(
      (w) => !(w.nodeId === task.nodeId && w.iteration === task.iteration && w.attempt === task.attempt),
    );
    ctx.emit({ kind: 'put_mailbox', mailbox: { ...box, waiters } });
    const timeoutTargets = signalEdgeTargets(ctx, node.id, true);
    const after = node.timeoutMs === null ? '' : ` within ${formatDuration(node.timeoutMs)}`;
    if (timeoutTargets.size === 0) {
      failRunning(ctx, task, `no signal "${node.event}" arrived${after}`, 'timeout');
      return;
    }
    ctx.record('signal.timed_out', { name: node.event }, at);
    completeRunning(ctx, task, { timed_out: true } as Json);
    await ctx.flow.propagate(node.id, purpose.iteration, true, timeoutTargets);
  },
};

/** The correlation key the node waits with ('' for none), or null once a bad value failed the node. */
async function correlationOf(
  ctx: DecisionContext,
  node: WaitForEventNode,
  reach: Reach,
): Promise<string | null> {
  const mapping = ctx.workflow.mapping(node.id, 'correlation');
  if (!mapping) return '';
  const evaluated = await evaluateAt(ctx, mapping, positionOf(ctx, node.id, reach.iteration));
  if (!evaluated.ok) {
    failAtStart(ctx, node.id, reach, evaluated.message);
    return null;
  }
  const key = correlationKey(evaluated.value);
  if (key === null) {
    const message = `correlation must give text or a number, not ${describeValue(evaluated.value)}`;
    failAtStart(ctx, node.id, reach, message);
    return null;
  }
  return key;
}

/** A correlation key as stored: text as is, numbers as their JSON text; anything else is refused. */
export function correlationKey(value: unknown): string | null {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}
