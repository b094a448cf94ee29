import type { HumanNode } from '../definition/node-types.js';
import type { Json } from '../json.js';
import type { DecisionContext } from './context.js';
import type { TimerPurpose } from './events.js';
import { arrive, computeInput, failRun, putTask } from './flow.js';
import type { Arrival, TaskError, TaskState } from './state.js';

/**
 * Human nodes in the decider. The attempt is created `running` (a person has it, not a worker) with the
 * computed input, and goes into the inbox; a deadline arms a timer. The answer arrives as an ordinary
 * `node_completed` (the shell stores the person's data as the output), which passes control along the
 * node's edges except its deadline edges; the deadline, if it passes first, does the opposite.
 */
export async function activateHuman(
  ctx: DecisionContext,
  node: HumanNode,
  iteration: string,
  waiting: TaskState | null,
  arrivals: readonly Arrival[],
): Promise<void> {
  const attempt = waiting?.attempt ?? 1;
  const at = { nodeId: node.id, iteration, attempt };
  const input = await computeInput(ctx, node, iteration);
  if (!input.ok) {
    const error: TaskError = { message: input.message, reason: 'input', retryable: false };
    putTask(ctx, node.id, iteration, waiting, { status: 'failed', input: null, error, arrivals });
    ctx.record('task.failed', { error: error as unknown as Json, final: true }, at);
    failRun(ctx, { message: `node "${node.id}" failed: ${input.message}`, node: node.id, reason: 'input' });
    return;
  }
  putTask(ctx, node.id, iteration, waiting, { status: 'running', input: input.value, arrivals });
  const deadlineAt = node.deadline ? new Date(ctx.now.getTime() + node.deadline.afterMs) : null;
  ctx.emit({
    kind: 'open_human_task',
    ...at,
    title: node.title,
    description: node.description ?? null,
    assignees: node.assignees,
    form: node.form,
    deadlineAt,
  });
  if (deadlineAt) ctx.emit({ kind: 'set_timer', dueAt: deadlineAt, purpose: { kind: 'deadline', ...at } });
  ctx.record(
    'human.opened',
    { title: node.title, assignees: [...node.assignees], deadline_at: deadlineAt?.toISOString() ?? null },
    at,
  );
}

/** True when the edge from `from` to `to` is a human node's deadline edge. */
export function isDeadlineEdge(ctx: DecisionContext, from: string, to: string): boolean {
  const node = ctx.workflow.node(from);
  return node.kind === 'human' && node.deadline !== null && node.deadline.to.includes(to);
}

/**
 * A human task's deadline passed. If nobody answered, the attempt ends as timed out and leaves the inbox;
 * the deadline edges are taken and the others skipped, or, with no deadline edge, the run fails.
 */
export async function humanDeadline(ctx: DecisionContext, purpose: TimerPurpose): Promise<void> {
  const { nodeId, iteration, attempt } = purpose;
  const task = ctx.task(nodeId, iteration);
  if (!task || task.attempt !== attempt || task.status !== 'running') return; // answered in time
  const node = ctx.workflow.node(nodeId);
  if (node.kind !== 'human' || node.deadline === null) return;
  const at = { nodeId, iteration, attempt };
  const error: TaskError = {
    message: `nobody answered within the deadline of ${node.deadline.afterMs} ms`,
    reason: 'timeout',
    retryable: false,
  };
  ctx.emit({ kind: 'update_task', ...at, expect: 'running', status: 'timed_out', error });
  ctx.emit({ kind: 'close_human_task', ...at, state: 'expired' });
  ctx.record('human.expired', { deadline_ms: node.deadline.afterMs, to: [...node.deadline.to] }, at);
  if (node.deadline.to.length === 0) {
    failRun(ctx, { message: `node "${nodeId}": ${error.message}`, node: nodeId, reason: 'deadline' });
    return;
  }
  for (const target of ctx.workflow.graph.successors.get(nodeId) ?? []) {
    if (ctx.run.status !== 'running') return;
    await arrive(ctx, target, iteration, { from: nodeId, taken: node.deadline.to.includes(target) });
  }
}
