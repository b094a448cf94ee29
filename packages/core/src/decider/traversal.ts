import type { ContainerNode } from '../definition/node-types.js';
import type { Json } from '../json.js';
import type { DecisionContext } from './context.js';
import type { Flow } from './flow.js';
import { isDeadlineEdge } from './labelled-edges.js';
import { handlerOf } from './nodes/node-table.js';
import { bodySinkDone } from './nodes/passes.js';
import { beginCompensation } from './saga.js';
import { scopeAt } from './scope.js';
import type { Arrival, RunError, TaskState } from './state.js';
import { putTask } from './task-rows.js';

/**
 * Graph movement shared by every event: starting a node (through its kind's handler), passing control (or
 * a skip) along its edges, waiting at joins, and finishing the run when every sink is done. Handlers reach
 * it through `ctx.flow`.
 */
export function createFlow(ctx: DecisionContext): Flow {
  return {
    activate: (nodeId, iteration, waiting, arrivals) => activate(ctx, nodeId, iteration, waiting, arrivals),
    propagate: (nodeId, iteration, taken, chosen) => propagate(ctx, nodeId, iteration, taken, chosen),
    arrive: (target, iteration, arrival) => arrive(ctx, target, iteration, arrival),
    completeRun: () => completeRun(ctx),
    failRun: (error) => failRun(ctx, error),
  };
}

async function activate(
  ctx: DecisionContext,
  nodeId: string,
  iteration: string,
  waiting: TaskState | null,
  arrivals: readonly Arrival[],
): Promise<void> {
  const node = ctx.workflow.node(nodeId);
  await handlerOf(node).activate(ctx, node, { iteration, waiting, arrivals });
}

/**
 * Passes control from a finished node along each outgoing edge; `taken` false passes a skip. With
 * `chosen` (a switch's case, a wait's timeout), only edges to those targets are taken; the others pass a
 * skip, so joins further on still hear from every branch. A last node of a loop or map body reports to
 * its pass or item instead of the run.
 */
async function propagate(
  ctx: DecisionContext,
  nodeId: string,
  iteration: string,
  taken: boolean,
  chosen?: ReadonlySet<string>,
): Promise<void> {
  const next = ctx.workflow.graph.successors.get(nodeId) ?? [];
  if (next.length === 0) {
    const container = ctx.workflow.graph.parent.get(nodeId) ?? null;
    if (container !== null) await bodySinkReached(ctx, container, nodeId, iteration, taken);
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

/** A last node of a body is done: when its pass (or item) is complete, its loop or map decides next. */
async function bodySinkReached(
  ctx: DecisionContext,
  containerId: string,
  sinkId: string,
  iteration: string,
  taken: boolean,
): Promise<void> {
  const container = ctx.workflow.node(containerId) as ContainerNode;
  const pass = await bodySinkDone(ctx, container, sinkId, iteration, taken);
  if (pass) await handlerOf(container).bodyDone?.(ctx, container, pass.parent, pass.index);
}

/**
 * A branch reaches `target`. Joins wait for every branch that can still arrive (or the first, for `any`).
 * A `waiting` row of a node with one incoming edge is a placeholder left by a retry or rerun
 * (operator/run-again.ts): the arrival starts that attempt.
 */
async function arrive(
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
  waitAtJoin(ctx, target, iteration, existing, arrivals);
}

/** Keeps the branches that arrived at a join whose other branches can still arrive. */
function waitAtJoin(
  ctx: DecisionContext,
  target: string,
  iteration: string,
  existing: TaskState | null,
  arrivals: readonly Arrival[],
): void {
  if (existing) {
    const at = { nodeId: target, iteration, attempt: existing.attempt };
    ctx.emit({ kind: 'update_task', ...at, expect: 'waiting', status: 'waiting', arrivals });
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
async function completeRun(ctx: DecisionContext): Promise<void> {
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
function failRun(ctx: DecisionContext, error: RunError): void {
  if (beginCompensation(ctx, error)) return;
  ctx.emit({ kind: 'cancel_open_work', reason: error.message });
  ctx.emit({ kind: 'finish_run', status: 'failed', output: null, error });
  ctx.record('run.failed', { error: error as unknown as Json });
}
