import type { TerminateNode, TransformNode } from '../definition/node-types.js';
import { isJsonObject, type Json } from '../json.js';
import type { DecisionContext } from './context.js';
import { failRun, propagate, putTask } from './flow.js';
import { failAtStart } from './outcome.js';
import { evaluateAt, positionOf } from './scope.js';
import type { Arrival, TaskState } from './state.js';

/**
 * A transform computes its `value` mapping as its output, with no worker, and may set run variables with
 * its `vars` mapping (read later as `vars.<name>`).
 */
export async function activateTransform(
  ctx: DecisionContext,
  node: TransformNode,
  iteration: string,
  waiting: TaskState | null,
  arrivals: readonly Arrival[],
): Promise<void> {
  const at = positionOf(ctx, node.id, iteration);
  const value = await evaluateAt(ctx, ctx.workflow.mapping(node.id, 'value')!, at);
  if (!value.ok) {
    failAtStart(ctx, node.id, iteration, waiting, arrivals, value.message);
    return;
  }
  const varsMapping = ctx.workflow.mapping(node.id, 'vars');
  if (varsMapping) {
    const vars = await evaluateAt(ctx, varsMapping, at);
    if (!vars.ok || !isJsonObject(vars.value)) {
      failAtStart(
        ctx,
        node.id,
        iteration,
        waiting,
        arrivals,
        vars.ok ? 'vars must give an object' : vars.message,
      );
      return;
    }
    ctx.emit({ kind: 'set_vars', values: vars.value });
    ctx.record('vars.set', { vars: vars.value }, { nodeId: node.id, iteration, attempt: 1 });
  }
  putTask(ctx, node.id, iteration, waiting, {
    status: 'completed',
    input: null,
    output: value.value,
    arrivals,
  });
  ctx.record('node.completed', { output: value.value }, { nodeId: node.id, iteration, attempt: 1 });
  await propagate(ctx, node.id, iteration, true);
}

/**
 * A terminate node ends the run at once: completed with its `output` mapping (null without one), or
 * failed with its `reason`. Unfinished work elsewhere in the run is cancelled.
 */
export async function activateTerminate(
  ctx: DecisionContext,
  node: TerminateNode,
  iteration: string,
  waiting: TaskState | null,
  arrivals: readonly Arrival[],
): Promise<void> {
  const at = positionOf(ctx, node.id, iteration);
  const field = node.status === 'completed' ? 'output' : 'reason';
  const mapping = ctx.workflow.mapping(node.id, field);
  let value: Json = null;
  if (mapping) {
    const evaluated = await evaluateAt(ctx, mapping, at);
    if (!evaluated.ok) {
      failAtStart(ctx, node.id, iteration, waiting, arrivals, evaluated.message);
      return;
    }
    value = evaluated.value;
  }
  putTask(ctx, node.id, iteration, waiting, { status: 'completed', input: null, output: value, arrivals });
  if (node.status === 'failed') {
    const reason =
      value === null
        ? `the run was ended by node "${node.id}"`
        : typeof value === 'string'
          ? value
          : JSON.stringify(value);
    failRun(ctx, { message: reason, node: node.id, reason: 'terminated' });
    return;
  }
  ctx.emit({ kind: 'cancel_open_work', reason: `the run was completed by node "${node.id}"` });
  ctx.emit({ kind: 'finish_run', status: 'completed', output: value, error: null });
  ctx.record('run.completed', { output: value, by_node: node.id });
}
