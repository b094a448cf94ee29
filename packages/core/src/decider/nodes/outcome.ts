import type { Json } from '../../json.js';
import type { DecisionContext } from '../context.js';
import type { TaskError, TaskState } from '../state.js';
import { putTask } from '../task-rows.js';
import type { Reach } from './node-handler.js';

/**
 * How a node ends when the engine holds it: completed with an output, or failed, which fails the run. A
 * control-flow node has no retry policy: what fails it is in the definition or the data, and a retry
 * would fail the same way.
 */

/**
 * Fails a node that could not start (an expression failed, a value had the wrong type) and the run. The
 * history names `attempt` (by default 1).
 */
export function failAtStart(
  ctx: DecisionContext,
  nodeId: string,
  reach: Reach,
  message: string,
  attempt = 1,
): void {
  const { iteration, waiting, arrivals } = reach;
  const error: TaskError = { message, reason: 'input', retryable: false };
  putTask(ctx, nodeId, iteration, waiting, { status: 'failed', input: null, error, arrivals });
  ctx.record('task.failed', { error: error as unknown as Json, final: true }, { nodeId, iteration, attempt });
  ctx.flow.failRun({ message: `node "${nodeId}" failed: ${message}`, node: nodeId, reason: 'input' });
}

/** Completes a node instance the engine holds in `running` (a wait, a loop, a map). */
export function completeRunning(ctx: DecisionContext, task: TaskState, output: Json): void {
  ctx.emit({
    kind: 'update_task',
    nodeId: task.nodeId,
    iteration: task.iteration,
    attempt: task.attempt,
    expect: 'running',
    status: 'completed',
    output,
  });
  ctx.record(
    'node.completed',
    { output },
    { nodeId: task.nodeId, iteration: task.iteration, attempt: task.attempt },
  );
}

/** Fails a node instance the engine holds in `running`, and the run. */
export function failRunning(
  ctx: DecisionContext,
  task: TaskState,
  message: string,
  reason: TaskError['reason'],
): void {
  const error: TaskError = { message, reason, retryable: false };
  ctx.emit({
    kind: 'update_task',
    nodeId: task.nodeId,
    iteration: task.iteration,
    attempt: task.attempt,
    expect: 'running',
    status: 'failed',
    error,
  });
  const at = { nodeId: task.nodeId, iteration: task.iteration, attempt: task.attempt };
  ctx.record('task.failed', { error: error as unknown as Json, final: true }, at);
  ctx.flow.failRun({ message: `node "${task.nodeId}" failed: ${message}`, node: task.nodeId, reason });
}

/** Describes a value's type for messages: `text "x"`, `the number 3`, `an object`, `a list`, `null`. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string')
    return `the text ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)}`;
  if (typeof value === 'object') return 'an object';
  return `the ${typeof value} ${String(value)}`;
}
