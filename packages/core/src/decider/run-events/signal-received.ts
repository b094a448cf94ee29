import type { DecisionContext } from '../context.js';
import type { RunEvent } from '../events.js';
import { signalEdgeTargets } from '../labelled-edges.js';
import { MAX_BUFFERED_SIGNALS } from '../mailbox.js';
import { completeRunning } from '../nodes/outcome.js';

/**
 * Signals, through the run's mailbox for the signal's name and correlation key (see
 * nodes/wait-for-event.ts for the other side): a signal goes to the first node waiting for it, or is kept
 * (at most MAX_BUFFERED_SIGNALS per name and key) for the next node that waits for it.
 */

type Signal = Extract<RunEvent, { kind: 'signal_received' }>;

/** A signal arrives: it goes to the first node waiting for it, or is kept. */
export async function signalReceived(ctx: DecisionContext, signal: Signal): Promise<void> {
  const base = {
    signal_id: signal.signalId,
    name: signal.name,
    correlation: signal.correlation,
    data: signal.data,
    by: signal.by,
  };
  if (ctx.run.status !== 'running') {
    ctx.record('signal.received', { ...base, outcome: 'ignored', why: `the run is ${ctx.run.status}` });
    return;
  }
  const box = ctx.mailbox(signal.name, signal.correlation ?? '');
  const waiters = [...box.waiters];
  while (waiters.length > 0) {
    const waiter = waiters.shift()!;
    const task = ctx.task(waiter.nodeId, waiter.iteration);
    // A waiter whose node no longer waits (its run branch was ended another way) is dropped.
    if (!task || task.attempt !== waiter.attempt || task.status !== 'running') continue;
    ctx.emit({ kind: 'put_mailbox', mailbox: { ...box, waiters } });
    const at = { nodeId: waiter.nodeId, iteration: waiter.iteration, attempt: waiter.attempt };
    ctx.record('signal.received', {
      ...base,
      outcome: 'delivered',
      node: waiter.nodeId,
      iteration: waiter.iteration,
    });
    ctx.record('signal.delivered', { signal_id: signal.signalId, name: signal.name }, at);
    completeRunning(ctx, task, signal.data);
    await ctx.flow.propagate(
      waiter.nodeId,
      waiter.iteration,
      true,
      signalEdgeTargets(ctx, waiter.nodeId, false),
    );
    return;
  }
  if (box.buffered.length >= MAX_BUFFERED_SIGNALS) {
    if (waiters.length !== box.waiters.length)
      ctx.emit({ kind: 'put_mailbox', mailbox: { ...box, waiters } });
    ctx.record('signal.received', {
      ...base,
      outcome: 'refused',
      why: `${MAX_BUFFERED_SIGNALS} signals named "${signal.name}" are already kept with nothing waiting for them`,
    });
    return;
  }
  const kept = { id: signal.signalId, data: signal.data, by: signal.by, at: ctx.now.toISOString() };
  ctx.emit({ kind: 'put_mailbox', mailbox: { ...box, waiters, buffered: [...box.buffered, kept] } });
  ctx.record('signal.received', { ...base, outcome: 'kept' });
}
