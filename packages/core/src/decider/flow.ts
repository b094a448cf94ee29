import type { TaskNode } from '../definition/node-types.js';
import type { Json } from '../json.js';
import { bodySinkDone } from './body.js';
import type { DecisionContext } from './context.js';
import { activateControl } from './control-nodes.js';
import { activateEffectNode } from './effect-nodes.js';
import { activateHuman, isDeadlineEdge } from './human.js';
import { beginCompensation } from './saga.js';
import { evaluateAt, innermost, itemOf, positionOf, scopeAt } from './scope.js';
import type { Arrival, RunError, TaskError, TaskState } from './state.js';

/**
 * Graph movement shared by every event: starting a node, passing control (or a skip) along its edges,
 * waiting at joins, and finishing the run when every sink is done.
 */

/**
 * Starts node `nodeId` in `iteration`. `waiting` is its join row when branches arrived there before, and
 * `arrivals` every branch that has arrived now.
 */
export async function activate(
  ctx: DecisionContext,
  nodeId: string,
  iteration: string,
  waiting: TaskState | null,
  arrivals: readonly Arrival[],
): Promise<void> {
  const node = ctx.workflow.node(nodeId);
  switch (node.kind) {
    case 'task': {
      const input = await computeInput(ctx, node, iteration);
      if (!input.ok) {
        const error: TaskError = { message: input.message, reason: 'input', retryable: false };
        putTask(ctx, nodeId, iteration, waiting, { status: 'failed', input: null, error, arrivals });
        ctx.record(
          'task.failed',
          { error: error as unknown as Json, final: true },
          { nodeId, iteration, attempt: waiting?.attempt ?? 1 },
        );
        failRun(ctx, { message: `node "${nodeId}" failed: ${input.message}`, node: nodeId, reason: 'input' });
        return;
      }
      putTask(ctx, nodeId, iteration, waiting, {
        status: 'queued',
        input: input.value,
        arrivals,
        dispatch: { taskType: node.taskType, priority: node.priority, timeoutMs: node.timeoutMs },
      });
      const attempt = waiting?.attempt ?? 1;
      ctx.record('task.scheduled', { task_type: node.taskType }, { nodeId, iteration, attempt });
      return;
    }
    case 'noop':
      putTask(ctx, nodeId, iteration, waiting, { status: 'completed', input: null, output: null, arrivals });
      await propagate(ctx, nodeId, iteration, true);
      return;
    case 'human':
      await activateHuman(ctx, node, iteration, waiting, arrivals);
      return;
    case 'sub_workflow':
    case 'start_workflow':
    case 'event':
    case 'http':
      await activateEffectNode(ctx, node, iteration, waiting, arrivals);
      return;
    default:
      await activateControl(ctx, node, iteration, waiting, arrivals);
      return;
  }
}

/** What a node instance's row is set to when it starts (or is skipped). */
export interface TaskFields {
  readonly status: 'queued' | 'running' | 'completed' | 'skipped' | 'failed';
  readonly input: Json | null;
  readonly output?: Json | null;
  readonly error?: TaskError | null;
  readonly arrivals: readonly Arrival[];
  readonly dispatch?: { taskType: string; priority: number; timeoutMs: number | null };
}

/** Creates attempt 1 of a node instance, or moves its waiting join row on. */
export function putTask(
  ctx: DecisionContext,
  nodeId: string,
  iteration: string,
  waiting: TaskState | null,
  f: TaskFields,
): void {
  if (waiting) {
    ctx.emit({
      kind: 'update_task',
      nodeId,
      iteration,
      attempt: waiting.attempt,
      expect: 'waiting',
      status: f.status,
      input: f.input,
      output: f.output ?? null,
      error: f.error ?? null,
      arrivals: f.arrivals,
      dispatch: f.dispatch ?? null,
    });
    return;
  }
  ctx.emit({
    kind: 'create_task',
    nodeId,
    iteration,
    attempt: 1,
    status: f.status,
    input: f.input,
    output: f.output ?? null,
    error: f.error ?? null,
    arrivals: f.arrivals,
    dispatch: f.dispatch ?? null,
  });
}

/**
 * Passes control from a finished node along each outgoing edge; `taken` false passes a skip. With
 * `chosen` (a switch's case, a wait's timeout), only edges to those targets are taken; the others pass a
 * skip, so joins further on still hear from every branch. A last node of a loop or map body reports to
 * its pass or item instead of the run.
 */
export async function propagate(
  ctx: DecisionContext,
  nodeId: string,
  iteration: string,
  taken: boolean,
  chosen?: ReadonlySet<string>,
): Promise<void> {
  const next = ctx.workflow.graph.successors.get(nodeId) ?? [];
  if (next.length === 0) {
    const container = ctx.workflow.graph.parent.get(nodeId) ?? null;
    if (container !== null) await bodySinkDone(ctx, container, nodeId, iteration, taken);
    else await sinkDone(ctx);
    return;
  }
  for (const target of next) {
    if (ctx.run.status !== 'running') return;
    // A human node's deadline edges are taken only when its deadline passes.
    await arrive(ctx, target, iteration, {
      from: nodeId,
      taken: taken && (!chosen || chosen.has(target)) && !isDeadlineEdge(ctx, nodeId, target),
    });
  }
}

/**
 * A branch reaches `target`. Joins wait for every branch that can still arrive (or the first, for `any`).
 * A `waiting` row of a node with one incoming edge is a placeholder left by a retry or rerun (reset.ts):
 * the arrival starts that attempt.
 */
export async function arrive(
  ctx: DecisionContext,
  target: string,
  iteration: string,
  arrival: Arrival,
): Promise<void> {
  const incoming = ctx.workflow.graph.predecessors.get(target) ?? [];
  const existing = ctx.task(target, iteration);
  if (incoming.length <= 1) {
    if (existing && existing.status !== 'waiting') return; // started by an earlier pass: nothing changes
    if (arrival.taken) await activate(ctx, target, iteration, existing, []);
    else await skip(ctx, target, iteration, existing, []);
    return;
  }
  const node = ctx.workflow.node(target);
  if (existing && existing.status !== 'waiting') {
    if (node.join === 'any' && !existing.arrivals.some((a) => a.from === arrival.from)) {
      ctx.record('join.ignored', { from: arrival.from, taken: arrival.taken }, { nodeId: target, iteration });
    }
    return;
  }
  const before = existing?.arrivals ?? [];
  if (before.some((a) => a.from === arrival.from)) return;
  const arrivals = [...before, arrival];
  if ((node.join === 'any' && arrival.taken) || arrivals.length >= incoming.length) {
    if (arrivals.some((a) => a.taken)) await activate(ctx, target, iteration, existing, arrivals);
    else await skip(ctx, target, iteration, existing, arrivals);
    return;
  }
  if (existing) {
    ctx.emit({
      kind: 'update_task',
      nodeId: target,
      iteration,
      attempt: existing.attempt,
      expect: 'waiting',
      status: 'waiting',
      arrivals,
    });
    return;
  }
  ctx.emit({
    kind: 'create_task',
    nodeId: target,
    iteration,
    attempt: 1,
    status: 'waiting',
    input: null,
    output: null,
    error: null,
    arrivals,
    dispatch: null,
  });
}

/** Marks a node skipped (its branch was not taken) and passes the skip on. */
async function skip(
  ctx: DecisionContext,
  nodeId: string,
  iteration: string,
  waiting: TaskState | null,
  arrivals: readonly Arrival[],
): Promise<void> {
  putTask(ctx, nodeId, iteration, waiting, { status: 'skipped', input: null, arrivals });
  ctx.record('node.skipped', {}, { nodeId, iteration });
  await propagate(ctx, nodeId, iteration, false);
}

async function sinkDone(ctx: DecisionContext): Promise<void> {
  ctx.emit({ kind: 'add_sinks_done', count: 1 });
  if (ctx.run.sinksDone >= ctx.workflow.graph.sinks.length) await completeRun(ctx);
}

/** Completes the run with its output mapping (or the outputs of its sinks). */
export async function completeRun(ctx: DecisionContext): Promise<void> {
  const mapping = ctx.workflow.outputMapping;
  let output: Json;
  if (mapping) {
    const result = await mapping.evaluate(scopeAt(ctx, mapping, { container: null, iteration: '' }), ctx.now);
    if (!result.ok) {
      failRun(ctx, {
        message: `the run output could not be computed: ${result.error.path}: ${result.error.message}`,
        reason: 'output',
      });
      return;
    }
    output = result.value;
  } else {
    const out: { [key: string]: Json } = {};
    for (const sink of ctx.workflow.graph.sinks) {
      const task = ctx.task(sink, '');
      if (task?.status === 'completed') out[sink] = task.output;
    }
    output = out;
  }
  ctx.emit({ kind: 'cancel_open_work', reason: 'the run completed' });
  ctx.emit({ kind: 'finish_run', status: 'completed', output, error: null });
  ctx.record('run.completed', { output });
}

/**
 * Fails the run: every unfinished attempt and timer is cancelled. A run of a workflow with compensations
 * starts compensating instead, and fails once they ran (saga.ts).
 */
export function failRun(ctx: DecisionContext, error: RunError): void {
  if (beginCompensation(ctx, error)) return;
  ctx.emit({ kind: 'cancel_open_work', reason: error.message });
  ctx.emit({ kind: 'finish_run', status: 'failed', output: null, error });
  ctx.record('run.failed', { error: error as unknown as Json });
}

/**
 * A task's input: its input mapping, or without one the item of the map around it (the run input outside
 * maps).
 */
export async function computeInput(
  ctx: DecisionContext,
  node: Pick<TaskNode, 'id'>,
  iteration: string,
): Promise<{ ok: true; value: Json } | { ok: false; message: string }> {
  const mapping = ctx.workflow.inputMapping(node.id);
  const at = positionOf(ctx, node.id, iteration);
  if (!mapping) {
    const map = innermost(ctx, at.container, 'map');
    return { ok: true, value: map === null ? ctx.run.input : itemOf(ctx, map, iteration) };
  }
  return evaluateAt(ctx, mapping, at);
}
