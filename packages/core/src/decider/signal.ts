import type { WaitForEventNode } from '../definition/node-types.js';
import { formatDuration } from '../duration.js';
import type { Json } from '../json.js';
import type { DecisionContext } from './context.js';
import type { RunEvent } from './events.js';
import { propagate, putTask } from './flow.js';
import { MAX_BUFFERED_SIGNALS, type SignalWaiter } from './mailbox.js';
import { completeRunning, describeValue, failAtStart, failRunning } from './outcome.js';
import { evaluateAt, positionOf } from './scope.js';
import type { Arrival, TaskState } from './state.js';

/**
 * Signals and wait_for_event nodes. Both go through the run's mailbox for the signal name and correlation
 * key, and both are decided under the run's row lock, so whatever order they come in, each signal is
 * taken by exactly one waiting node or kept, and a node that times out is never also given a signal:
 *
 * - a node that starts waiting takes the oldest kept signal, or joins the waiters (and arms its timeout);
 * - a signal goes to the first waiter, or is kept (at most MAX_BUFFERED_SIGNALS per name and key) for the
 *   next node that waits for it;
 * - a timeout finds the node still waiting (it takes the `on: timeout` edges, or fails the node), or
 *   finds it already given a signal, and does nothing.
 */

type Signal = Extract<RunEvent, { kind: 'signal_received' }>;

/** A wait_for_event node is reached. */
export async function activateWaitForEvent(
  ctx: DecisionContext,
  node: WaitForEventNode,
  iteration: string,
  waiting: TaskState | null,
  arrivals: readonly Arrival[],
): Promise<void> {
  let correlation = '';
  const mapping = ctx.workflow.mapping(node.id, 'correlation');
  if (mapping) {
    const evaluated = await evaluateAt(ctx, mapping, positionOf(ctx, node.id, iteration));
    if (!evaluated.ok) {
      failAtStart(ctx, node.id, iteration, waiting, arrivals, evaluated.message);
      return;
    }
    const key = correlationKey(evaluated.value);
    if (key === null) {
      failAtStart(
        ctx,
        node.id,
        iteration,
        waiting,
        arrivals,
        `correlation must give text or a number, not ${describeValue(evaluated.value)}`,
      );
      return;
    }
    correlation = key;
  }
  const box = ctx.mailbox(node.event, correlation);
  const attempt = waiting?.attempt ?? 1;
  const at = { nodeId: node.id, iteration, attempt };
  const input = { event: node.event, correlation: correlation === '' ? null : correlation };
  const kept = box.buffered[0];
  if (kept) {
    ctx.emit({ kind: 'put_mailbox', mailbox: { ...box, buffered: box.buffered.slice(1) } });
    putTask(ctx, node.id, iteration, waiting, { status: 'completed', input, output: kept.data, arrivals });
    ctx.record('signal.delivered', { signal_id: kept.id, name: node.event, kept_since: kept.at }, at);
    await propagate(ctx, node.id, iteration, true, normalEdges(ctx, node.id));
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
  if (timeoutAt) ctx.emit({ kind: 'set_timer', dueAt: timeoutAt, purpose: { kind: 'event_timeout', ...at } });
  ctx.record('signal.waiting', { ...input, timeout_at: timeoutAt?.toISOString() ?? null }, at);
}

/** A signal arrives: it goes to the first node waiting for it, or is kept. */
export async function onSignal(ctx: DecisionContext, signal: Signal): Promise<void> {
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
    await propagate(ctx, waiter.nodeId, waiter.iteration, true, normalEdges(ctx, waiter.nodeId));
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

/** A wait_for_event node's timeout passed: take its timeout edges, or fail it. */
export async function onEventTimeout(
  ctx: DecisionContext,
  purpose: { nodeId: string; iteration: string; attempt: number },
): Promise<void> {
  const task = ctx.task(purpose.nodeId, purpose.iteration);
  if (!task || task.attempt !== purpose.attempt || task.status !== 'running') {
    // The signal came first (or the run moved on): the timeout is over and done with.
    ctx.record('timer.ignored', { purpose: 'event_timeout', status: task?.status ?? null }, purpose);
    return;
  }
  const node = ctx.workflow.node(purpose.nodeId) as WaitForEventNode;
  const input = task.input as { correlation?: string | null } | null;
  const box = ctx.mailbox(node.event, input?.correlation ?? '');
  const waiters = box.waiters.filter(
    (w) => !(w.nodeId === task.nodeId && w.iteration === task.iteration && w.attempt === task.attempt),
  );
  ctx.emit({ kind: 'put_mailbox', mailbox: { ...box, waiters } });
  const timeoutTargets = edgesOf(ctx, node.id, true);
  const after = node.timeoutMs === null ? '' : ` within ${formatDuration(node.timeoutMs)}`;
  if (timeoutTargets.size === 0) {
    failRunning(ctx, task, `no signal "${node.event}" arrived${after}`, 'timeout');
    return;
  }
  ctx.record('signal.timed_out', { name: node.event }, purpose);
  completeRunning(ctx, task, { timed_out: true } as Json);
  await propagate(ctx, node.id, purpose.iteration, true, timeoutTargets);
}

/** Targets of a wait_for_event node's edges: its `on: timeout` edges, or the others. */
function edgesOf(ctx: DecisionContext, nodeId: string, timeout: boolean): Set<string> {
  const graph = ctx.workflow.graph;
  return new Set(
    (graph.successors.get(nodeId) ?? []).filter(
      (t) => (graph.labels.get(`${nodeId}\u0000${t}`)?.kind === 'timeout') === timeout,
    ),
  );
}

function normalEdges(ctx: DecisionContext, nodeId: string): Set<string> {
  return edgesOf(ctx, nodeId, false);
}

/** A correlation key as stored: text as is, numbers as their JSON text; anything else is refused. */
export function correlationKey(value: unknown): string | null {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}
