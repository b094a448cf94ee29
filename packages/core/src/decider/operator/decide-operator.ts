import { compensatedNodeOf } from '../../definition/compensation.js';
import type { DecisionContext } from '../context.js';
import type { RunEvent } from '../events.js';
import { limitKeyOf } from '../nodes/limit-key.js';
import type { OperatorEvent, Requester } from '../operator-events.js';
import { isTerminalRun, type RunStatus } from '../state.js';
import { reopensBody } from './body-rerun.js';
import { inGraphOrder, instanceLabel } from './instances.js';
import { override, who } from './override.js';
import { rerunSet, retrySet, runAgain } from './run-again.js';

/** Run statuses retry and rerun start from. */
export const RETRYABLE_RUN_STATUSES: readonly RunStatus[] = ['failed', 'cancelled', 'terminated'];

/**
 * Decides an operator event. Returns the events that follow from it (the effect of finishing a task by
 * hand), which the caller decides at once on a running run and keeps for resume on a paused one. Events
 * that make no sense in the run's state change nothing: the engine refuses them before they get here
 * (checkOperatorRequest), and this keeps a stale one harmless.
 */
export async function decideOperatorEvent(ctx: DecisionContext, event: OperatorEvent): Promise<RunEvent[]> {
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
        const limitKey = await limitKeyOf(ctx, node, task.iteration);
        ctx.emit({
          kind: 'dispatch_task',
          nodeId: task.nodeId,
          iteration: task.iteration,
          attempt: task.attempt,
          dispatch: {
            taskType: node.taskType,
            priority: node.priority,
            timeoutMs: node.timeoutMs,
            ...(limitKey !== undefined ? { limitKey } : {}),
          },
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
    case 'run_migrated':
      // The shell moved the run's rows before deciding this; the decision only records it (invariant 28).
      ctx.record('run.migrated', {
        ...who(event),
        from_version: event.fromVersion,
        to_version: event.toVersion,
        node_map: event.nodeMap,
      });
      return [];
    case 'task_overridden':
      return override(ctx, event);
    case 'node_skipped': {
      const task = ctx.task(event.nodeId, event.iteration);
      if (!task || task.attempt !== event.attempt || task.status !== 'skipped') return [];
      if (status === 'running') await ctx.flow.propagate(event.nodeId, event.iteration, true);
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

/** True when the run ran a compensation (retry and rerun are refused then; see checkOperatorRequest). */
function ranCompensation(ctx: DecisionContext): boolean {
  return ctx.allTasks().some((t) => compensatedNodeOf(t.nodeId) !== null);
}
