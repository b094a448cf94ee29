import type { TaskNode } from '../definition/types.js';
import type { CompiledMapping } from '../expr/mapping.js';
import type { Json } from '../json.js';
import type { DecisionContext } from './context.js';
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
  }
}

interface TaskFields {
  readonly status: 'queued' | 'completed' | 'skipped' | 'failed';
  readonly input: Json | null;
  readonly output?: Json | null;
  readonly error?: TaskError | null;
  readonly arrivals: readonly Arrival[];
  readonly dispatch?: { taskType: string; priority: number; timeoutMs: number | null };
}

/** Creates attempt 1 of a node instance, or moves its waiting join row on. */
function putTask(
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

/** Passes control from a finished node along each outgoing edge; `taken` false passes a skip. */
export async function propagate(
  ctx: DecisionContext,
  nodeId: string,
  iteration: string,
  taken: boolean,
): Promise<void> {
  const next = ctx.workflow.graph.successors.get(nodeId) ?? [];
  if (next.length === 0) {
    await sinkDone(ctx);
    return;
  }
  for (const target of next) {
    if (ctx.run.status !== 'running') return;
    await arrive(ctx, target, iteration, { from: nodeId, taken });
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
    const result = await mapping.evaluate(scopeFor(ctx, mapping, ''), ctx.now);
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

/** Fails the run: every unfinished attempt and timer is cancelled. */
export function failRun(ctx: DecisionContext, error: RunError): void {
  ctx.emit({ kind: 'cancel_open_work', reason: error.message });
  ctx.emit({ kind: 'finish_run', status: 'failed', output: null, error });
  ctx.record('run.failed', { error: error as unknown as Json });
}

async function computeInput(
  ctx: DecisionContext,
  node: TaskNode,
  iteration: string,
): Promise<{ ok: true; value: Json } | { ok: false; message: string }> {
  const mapping = ctx.workflow.inputMapping(node.id);
  if (!mapping) return { ok: true, value: ctx.run.input };
  const result = await mapping.evaluate(scopeFor(ctx, mapping, iteration), ctx.now);
  if (result.ok) return result;
  return {
    ok: false,
    message: `${result.error.path}: ${result.error.message}${explainRefs(ctx, mapping, iteration)}`,
  };
}

/** The expression scope for a mapping: run input, variables, and the outputs of the nodes it reads. */
function scopeFor(ctx: DecisionContext, mapping: CompiledMapping, iteration: string) {
  const nodes: Record<string, Json> = {};
  for (const ref of mapping.refs) {
    const task = ctx.task(ref, iteration);
    // An operator's skip may give the node an output; a skipped branch has none.
    const skippedWithOutput = task?.status === 'skipped' && task.output !== null;
    if (task?.status === 'completed' || skippedWithOutput)
      nodes[ref] = { output: task!.output, attempt: task!.attempt };
  }
  return {
    input: ctx.run.input,
    nodes,
    vars: ctx.run.vars,
    run: { id: ctx.run.id, definition: ctx.run.definition, version: ctx.run.version },
  };
}

function explainRefs(ctx: DecisionContext, mapping: CompiledMapping, iteration: string): string {
  const notes: string[] = [];
  for (const ref of mapping.refs) {
    const task = ctx.task(ref, iteration);
    if (!task) notes.push(`node "${ref}" has not run`);
    else if (task.status !== 'completed') notes.push(`node "${ref}" is ${task.status}, so it has no output`);
  }
  return notes.length ? ` (${notes.join('; ')})` : '';
}
