import type { HumanNode } from '../../definition/node-types.js';
import type { TaskError } from '../state.js';
import { putTask } from '../task-rows.js';
import type { NodeHandler } from './node-handler.js';
import { startingInput } from './node-input.js';

/**
 * Human nodes in the decider. The attempt is created `running` (a person has it, not a worker) with the
 * computed input, and goes into the inbox; a deadline arms a timer. The answer arrives as an ordinary
 * `node_completed` (the shell stores the person's data as the output), which passes control along the
 * node's edges except its deadline edges; the deadline, if it passes first, does the opposite.
 */
export const humanNode: NodeHandler<HumanNode> = {
  async activate(ctx, node, reach) {
    const { iteration, waiting, arrivals } = reach;
    const input = await startingInput(ctx, node.id, reach);
    if (!input) return;
    const at = { nodeId: node.id, iteration, attempt: input.attempt };
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
  },

  /**
   * The deadline passed. If nobody answered, the attempt ends as timed out and leaves the inbox; the
   * deadline edges are taken and the others skipped, or, with no deadline edge, the run fails.
   */
  async timerFired(ctx, node, purpose) {
    const { nodeId, iteration, attempt } = purpose;
    const task = ctx.task(nodeId, iteration);
    if (!task || task.attempt !== attempt || task.status !== 'running') return; // answered in time
    if (node.deadline === null) return;
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
      ctx.flow.failRun({ message: `node "${nodeId}": ${error.message}`, node: nodeId, reason: 'deadline' });
      return;
    }
    for (const target of ctx.workflow.graph.successors.get(nodeId) ?? []) {
      if (ctx.run.status !== 'running') return;
      await ctx.flow.arrive(target, iteration, { from: nodeId, taken: node.deadline.to.includes(target) });
    }
  },
};
