import type { Json } from '../../json.js';
import type { DecisionContext } from '../context.js';
import type { RunEvent } from '../events.js';
import type { OperatorEvent, Requester, TaskOutcome } from '../operator-events.js';
import type { TaskError, TaskState } from '../state.js';

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
 * Finishes a task by hand: completed, failed or skipped as the operator says. Returns the event that
 * follows (the attempt's completion, failure or skip), which the caller decides next.
 */
export function override(
  ctx: DecisionContext,
  event: Extract<OperatorEvent, { kind: 'task_overridden' }>,
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

/** Who asked, for history. */
export function who(event: Requester): { by: string; reason: string | null } {
  return { by: event.by, reason: event.reason ?? null };
}
