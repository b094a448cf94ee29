import type { Workflow } from '../definition/workflow.js';
import type { Json } from '../json.js';
import type { Action } from './actions.js';
import { retryDelayMs } from './backoff.js';
import { childFinished } from './children.js';
import { DecisionContext } from './context.js';
import { decideControl } from './control.js';
import { onControlTimer } from './control-nodes.js';
import type { DecideOptions } from './decide-options.js';
import { retryEffectNode, retryPolicyOf } from './effect-nodes.js';
import type { RunEvent } from './events.js';
import { activate, failRun, propagate } from './flow.js';
import { humanDeadline } from './human.js';
import type { MailboxKey } from './mailbox.js';
import { noteCompleted, onCompensating } from './saga.js';
import { onSignal } from './signal.js';
import { type DecisionState, MissingState } from './state.js';
import { sweepRun } from './sweep.js';

/** What one decision gives back: the actions to write, or the node instances it still needs loaded. */
export type DecideResult =
  | { readonly kind: 'decided'; readonly actions: readonly Action[]; readonly state: DecisionState }
  | {
      readonly kind: 'needs';
      readonly keys: readonly { readonly nodeId: string; readonly iteration: string }[];
      /** Signal mailboxes to load, when the decision reads any. */
      readonly mailboxes?: readonly MailboxKey[];
    };

/**
 * The decider: given a workflow, the part of a run's state it needs, one event and the time, says what
 * changes. Pure: no database, clock, randomness or network. When it reads a node instance the shell did
 * not load, it returns `needs` and the shell loads it and calls again, which gives the same answer.
 */
export async function decide(
  workflow: Workflow,
  state: DecisionState,
  event: RunEvent,
  now: Date,
  options: DecideOptions = {},
): Promise<DecideResult> {
  const ctx = new DecisionContext(workflow, state, now, options);
  try {
    await handle(ctx, event);
  } catch (e) {
    if (e instanceof MissingState)
      return { kind: 'needs', keys: e.keys, ...(e.mailboxes.length > 0 ? { mailboxes: e.mailboxes } : {}) };
    throw e;
  }
  return { kind: 'decided', actions: ctx.actions, state: ctx.state() };
}

async function handle(ctx: DecisionContext, event: RunEvent): Promise<void> {
  // A compensating run decides its compensations' events (saga.ts); operator actions as usual.
  if (ctx.run.status === 'compensating' && (await onCompensating(ctx, event))) return;
  const running = ctx.run.status === 'running';
  switch (event.kind) {
    case 'run_started': {
      if (!running) return;
      const entries = ctx.workflow.graph.entries;
      if (entries.some((id) => ctx.task(id, '') !== null)) return; // already started
      ctx.record('run.started', { input: ctx.run.input });
      for (const id of entries) {
        if (ctx.run.status !== 'running') return;
        await activate(ctx, id, '', null, []);
      }
      return;
    }
    case 'node_completed': {
      const task = ctx.task(event.nodeId, event.iteration);
      if (!task || task.attempt !== event.attempt || task.status !== 'completed') return; // stale
      const at = { nodeId: event.nodeId, iteration: event.iteration, attempt: event.attempt };
      ctx.record('task.completed', { output: task.output }, at);
      if (!running) return;
      noteCompleted(ctx, event.nodeId, event.iteration);
      await propagate(ctx, event.nodeId, event.iteration, true);
      return;
    }
    case 'node_failed': {
      const task = ctx.task(event.nodeId, event.iteration);
      if (!task || task.attempt !== event.attempt) return; // stale
      const at = { nodeId: event.nodeId, iteration: event.iteration, attempt: event.attempt };
      const node = ctx.workflow.node(event.nodeId);
      const policy = retryPolicyOf(node);
      const canRetry =
        running && event.error.retryable && policy !== null && event.attempt < policy.maxAttempts;
      if (!canRetry) {
        ctx.record('task.failed', { error: event.error as unknown as Json, final: true }, at);
        if (!running) return;
        const why =
          event.error.reason === 'error'
            ? event.error.message
            : `${event.error.reason.replace('_', ' ')}: ${event.error.message}`;
        const tries = event.attempt > 1 ? ` after ${event.attempt} attempts` : '';
        failRun(ctx, {
          message: `node "${event.nodeId}" failed${tries}: ${why}`,
          node: event.nodeId,
          reason: event.error.reason,
        });
        return;
      }
      const delayMs = retryDelayMs(policy, event.attempt);
      ctx.record(
        'task.failed',
        { error: event.error as unknown as Json, final: false, retry_in_ms: delayMs },
        at,
      );
      if (delayMs === 0) {
        retry(ctx, event.nodeId, event.iteration, event.attempt, task.input);
        return;
      }
      if (ctx.options.retryOnQueue && node.kind === 'task') {
        // The attempt is queued now with a not-before time, and the dispatcher holds it back.
        retry(ctx, event.nodeId, event.iteration, event.attempt, task.input, delayMs);
        return;
      }
      ctx.emit({
        kind: 'set_timer',
        dueAt: new Date(ctx.now.getTime() + delayMs),
        purpose: { kind: 'retry', nodeId: event.nodeId, iteration: event.iteration, attempt: event.attempt },
      });
      return;
    }
    case 'timer_fired': {
      if (!running) return;
      if (event.purpose.kind === 'deadline') {
        await humanDeadline(ctx, event.purpose);
        return;
      }
      if (event.purpose.kind !== 'retry') {
        await onControlTimer(ctx, event.purpose);
        return;
      }
      const { nodeId, iteration, attempt } = event.purpose;
      const task = ctx.task(nodeId, iteration);
      if (!task || task.attempt !== attempt || (task.status !== 'failed' && task.status !== 'timed_out'))
        return;
      retry(ctx, nodeId, iteration, attempt, task.input);
      return;
    }
    case 'run_cancelled':
    case 'run_paused':
    case 'run_resumed':
    case 'run_terminated':
    case 'run_retried':
    case 'run_rerun':
    case 'task_overridden':
    case 'node_skipped': {
      // Operator actions (control.ts). What follows from one is decided now, or kept for resume.
      for (const next of await decideControl(ctx, event)) {
        if (ctx.run.status === 'running') await handle(ctx, next);
        else if (ctx.run.status === 'paused') ctx.emit({ kind: 'defer', event: next });
      }
      return;
    }
    case 'signal_received':
      await onSignal(ctx, event);
      return;
    case 'run_swept':
      await sweepRun(ctx, event.idleMs);
      return;
    case 'child_finished': {
      const failure = await childFinished(ctx, event);
      if (failure) await handle(ctx, failure);
      return;
    }
    case 'compensation_due':
      return; // only a compensating run has one (handled above)
    case 'report_refused': {
      ctx.record(
        'task.report_refused',
        {
          report: event.report,
          why: event.why,
          worker: event.worker,
          ...(event.details !== undefined ? { details: event.details } : {}),
        },
        { nodeId: event.nodeId, iteration: event.iteration, attempt: event.attempt },
      );
      return;
    }
  }
}

/** Schedules the attempt after `failedAttempt` with the same input. */
function retry(
  ctx: DecisionContext,
  nodeId: string,
  iteration: string,
  failedAttempt: number,
  input: Json | null,
  delayMs = 0,
): void {
  const node = ctx.workflow.node(nodeId);
  if (node.kind !== 'task') {
    retryEffectNode(ctx, node, iteration, failedAttempt, input);
    return;
  }
  const attempt = failedAttempt + 1;
  ctx.emit({
    kind: 'create_task',
    nodeId,
    iteration,
    attempt,
    status: 'queued',
    input,
    output: null,
    error: null,
    arrivals: [],
    dispatch: {
      taskType: node.taskType,
      priority: node.priority,
      timeoutMs: node.timeoutMs,
      ...(delayMs > 0 ? { delayMs } : {}),
    },
  });
  ctx.record(
    'task.scheduled',
    { task_type: node.taskType, retry: true, ...(delayMs > 0 ? { delay_ms: delayMs } : {}) },
    { nodeId, iteration, attempt },
  );
}
