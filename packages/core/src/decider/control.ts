import { compensatedNodeOf } from '../definition/compensation.js';
import type { Json } from '../json.js';
import { reopensBody } from './body-rerun.js';
import type { DecisionContext } from './context.js';
import type { ControlEvent, TaskOutcome } from './control-events.js';
import type { Requester, RunEvent } from './events.js';
import { propagate } from './flow.js';
import { inGraphOrder, instanceLabel, rerunSet, retrySet, runAgain } from './reset.js';
import { isTerminalRun, type RunStatus, type TaskError, type TaskState } from './state.js';

/** Operator events, as the decider sees them: the control events and `run_cancelled`. */
export type OperatorEvent = ControlEvent | Extract<RunEvent, { kind: 'run_cancelled' }>;

/** Run statuses retry and rerun start from. */
export const RETRYABLE_RUN_STATUSES: readonly RunStatus[] = ['failed', 'cancelled', 'terminated'];

/**
 * Where an operator's outcome for a task lands: on the open attempt itself (queued or running: the
 * worker's lease is void from then on, so its report is refused), or on a new attempt after a failed one
 * that waits for its retry (the retry timer then finds its attempt stale). Null when the task cannot be
 * finished by hand.
 */
export function overrideTarget(task: TaskState | null): { mode: 'open' | 'next'; attempt: number } | null {
  if (!task) return null;
  if (task.status === 'queued' || task.status === 'running') return { mode: 'open', attempt: task.attempt };
  if (task.status === 'failed' || task.status === 'timed_out')
    return { mode: 'next', attempt: task.attempt + 1 };
  return null;
}

/**
 * Decides an operator event. Returns the events that follow from it (the effect of finishing a task by
 * hand), which the caller decides at once on a running run and keeps for resume on a paused one. Events
 * that make no sense in the run's state change nothing: the control service refuses them before they get
 * here, and this keeps a stale one harmless.
 */
export async function decideControl(ctx: DecisionContext, event: OperatorEvent): Promise<RunEvent[]> {
  const status = ctx.run.status;
  switch (event.kind) {
    case 'run_paused':
      if (status !== 'running') return [];
      ctx.emit({ kind: 'set_run_status', status: 'paused', reopen: false });
      ctx.record('run.paused', who(event));
      return [];
    case 'run_resumed': {
      if (status !== 'paused') return [];
      ctx.emit({ kind: 'set_run_status', status: 'running', reopen: false });
      ctx.record('run.resumed', who(event));
      // Queue rows of queued tasks may have been taken while the run was paused (leasing skips paused
      // runs): put them back. A duplicate is harmless, leasing checks the task.
      for (const task of ctx.allTasks()) {
        const node = ctx.workflow.node(task.nodeId);
        if (task.status !== 'queued' || node.kind !== 'task') continue;
        ctx.emit({
          kind: 'dispatch_task',
          nodeId: task.nodeId,
          iteration: task.iteration,
          attempt: task.attempt,
          dispatch: { taskType: node.taskType, priority: node.priority, timeoutMs: node.timeoutMs },
        });
      }
      // Events that arrived during the pause wait in the inbox, and their wake-ups were dropped: ask for the
      // decision that takes them, in this transaction (invariant 5).
      ctx.emit({ kind: 'request_decision', reason: 'resumed' });
      return [];
    }
    case 'run_cancelled':
      stopRun(ctx, event, 'cancelled');
      return [];
    case 'run_terminated':
      stopRun(ctx, event, 'terminated');
      return [];
    case 'run_retried': {
      if (!RETRYABLE_RUN_STATUSES.includes(status) || ranCompensation(ctx)) return [];
      const chosen = inGraphOrder(ctx.workflow, retrySet(ctx.allTasks()));
      if (chosen.length === 0 || reopensBody(ctx.workflow, chosen)) return [];
      ctx.record('run.retried', { ...who(event), nodes: chosen.map(instanceLabel) });
      await runAgain(ctx, chosen);
      return [];
    }
    case 'run_rerun': {
      if (!isTerminalRun(status) || ctx.task(event.nodeId, event.iteration) === null) return [];
      if (ranCompensation(ctx)) return [];
      const chosen = inGraphOrder(ctx.workflow, rerunSet(ctx.workflow, ctx.allTasks(), event));
      if (reopensBody(ctx.workflow, chosen)) return [];
      ctx.record('run.rerun', {
        ...who(event),
        from: instanceLabel(event),
        nodes: chosen.map(instanceLabel),
      });
      await runAgain(ctx, chosen);
      return [];
    }
    case 'task_overridden':
      return override(ctx, event);
    case 'node_skipped': {
      const task = ctx.task(event.nodeId, event.iteration);
      if (!task || task.attempt !== event.attempt || task.status !== 'skipped') return [];
      if (status === 'running') await propagate(ctx, event.nodeId, event.iteration, true);
      return [];
    }
  }
}

/**
 * Cancels or terminates a running, paused or compensating run: open work (a running compensation too)
 * stops and late reports are refused.
 */
function stopRun(ctx: DecisionContext, event: Requester, status: 'cancelled' | 'terminated'): void {
  const was = ctx.run.status;
  if (was !== 'running' && was !== 'paused' && was !== 'compensating') return;
  const message = event.reason ? `${status} by ${event.by}: ${event.reason}` : `${status} by ${event.by}`;
  ctx.emit({
    kind: 'cancel_open_work',
    reason: message,
    mode: status === 'cancelled' ? 'cancel' : 'terminate',
  });
  ctx.emit({ kind: 'finish_run', status, output: null, error: { message, reason: status } });
  ctx.record(`run.${status}`, { by: event.by, reason: event.reason ?? null });
  // A paused run kept its events in the inbox; let them be recorded now that it is over.
  if (was === 'paused') ctx.emit({ kind: 'request_decision', reason: `${status} while paused` });
}

function override(
  ctx: DecisionContext,
  event: Extract<ControlEvent, { kind: 'task_overridden' }>,
): RunEvent[] {
  if (ctx.run.status !== 'running' && ctx.run.status !== 'paused') return [];
  const { nodeId, iteration, outcome } = event;
  const task = ctx.task(nodeId, iteration);
  const target = overrideTarget(task);
  if (!task || !target) return [];
  const fields = outcomeFields(outcome, event);
  if (target.mode === 'open') {
    ctx.emit({
      kind: 'update_task',
      nodeId,
      iteration,
      attempt: task.attempt,
      expect: task.status,
      ...fields,
    });
  } else {
    ctx.emit({
      kind: 'create_task',
      nodeId,
      iteration,
      attempt: target.attempt,
      input: task.input,
      arrivals: task.arrivals,
      dispatch: null,
      ...fields,
    });
  }
  const attempt = target.attempt;
  const detail: { [key: string]: Json } =
    outcome.kind === 'failed' ? { error: outcome.error as unknown as Json } : { output: outcome.output };
  ctx.record(
    `task.${outcome.kind}_by_operator`,
    { ...who(event), ...detail },
    { nodeId, iteration, attempt },
  );
  switch (outcome.kind) {
    case 'completed':
      return [{ kind: 'node_completed', nodeId, iteration, attempt }];
    case 'failed':
      return [{ kind: 'node_failed', nodeId, iteration, attempt, error: outcome.error }];
    case 'skipped':
      return [{ kind: 'node_skipped', nodeId, iteration, attempt }];
  }
}

function outcomeFields(
  outcome: TaskOutcome,
  by: Requester,
): { status: 'completed' | 'failed' | 'skipped'; output: Json | null; error: TaskError | null } {
  switch (outcome.kind) {
    case 'completed':
      return { status: 'completed', output: outcome.output, error: null };
    case 'failed':
      return { status: 'failed', output: null, error: outcome.error };
    case 'skipped': {
      const message = by.reason ? `skipped by ${by.by}: ${by.reason}` : `skipped by ${by.by}`;
      return {
        status: 'skipped',
        output: outcome.output,
        error: { message, reason: 'skipped', retryable: false },
      };
    }
  }
}

function who(event: Requester): { by: string; reason: string | null } {
  return { by: event.by, reason: event.reason ?? null };
}

/** True when the run ran a compensation (retry and rerun are refused then; see checkControl). */
function ranCompensation(ctx: DecisionContext): boolean {
  return ctx.allTasks().some((t) => compensatedNodeOf(t.nodeId) !== null);
}
