import { compensatedNodeOf, compensationNodeId, SAGA_LOG_NODE } from '../definition/compensation.js';
import type { TaskNode } from '../definition/node-types.js';
import type { Json } from '../json.js';
import { retryDelayMs } from './backoff.js';
import type { DecisionContext } from './context.js';
import type { RunEvent } from './events.js';
import { evaluateAt, positionOf } from './scope.js';
import type { RunError, TaskError, TaskState } from './state.js';

/**
 * Saga compensation. While a run of a workflow with compensations runs, every completion of a task that
 * names a compensation is appended to the run's saga log (one row, `weft.saga`), in the order the
 * decisions saw them. When the run fails for good, it becomes `compensating`: its open work is cancelled,
 * and the compensations of the logged instances run one at a time, last completed first, as ordinary
 * tasks leased and reported by workers (never inside a decision). Each is retried by its own policy.
 * Then the run ends `failed` with the first failure as its error and `compensation` saying what ran; if
 * a compensation fails for good, the rest are not run and the run ends `failed` with the reason
 * `compensation_failed`.
 */

/** One node instance in the saga log. */
interface Entry {
  readonly node: string;
  readonly iteration: string;
}

/** The saga log, as the output of its row. */
interface SagaLog {
  /** Compensable instances in the order their completions were decided. */
  readonly completed: readonly Entry[];
  readonly phase: 'open' | 'compensating' | 'ended';
  /** The failure that started compensation. */
  readonly error: RunError | null;
  /** Instances still to compensate; the last one is next. */
  readonly todo: readonly Entry[];
  /** The instance whose compensation is running. */
  readonly current: Entry | null;
  readonly compensated: readonly Entry[];
}

const EMPTY: SagaLog = {
  completed: [],
  phase: 'open',
  error: null,
  todo: [],
  current: null,
  compensated: [],
};

const label = (e: Entry) => (e.iteration ? `${e.node}[${e.iteration}]` : e.node);
const same = (a: Entry, b: Entry) => a.node === b.node && a.iteration === b.iteration;

function readLog(ctx: DecisionContext): { row: TaskState | null; log: SagaLog } {
  const row = ctx.task(SAGA_LOG_NODE, '');
  return { row, log: row?.output ? (row.output as unknown as SagaLog) : EMPTY };
}

function writeLog(ctx: DecisionContext, row: TaskState | null, log: SagaLog): void {
  const output = log as unknown as Json;
  if (row) {
    ctx.emit({
      kind: 'update_task',
      nodeId: SAGA_LOG_NODE,
      iteration: '',
      attempt: row.attempt,
      expect: 'completed',
      status: 'completed',
      output,
    });
    return;
  }
  ctx.emit({
    kind: 'create_task',
    nodeId: SAGA_LOG_NODE,
    iteration: '',
    attempt: 1,
    status: 'completed',
    input: null,
    output,
    error: null,
    arrivals: [],
    dispatch: null,
  });
}

function compensable(ctx: DecisionContext, nodeId: string): TaskNode | null {
  if (!ctx.workflow.compensable || compensatedNodeOf(nodeId) !== null) return null;
  const node = ctx.workflow.node(nodeId);
  return node.kind === 'task' && node.compensate ? node : null;
}

/** Logs the completion of a compensable task instance (a no-op for any other node). */
export function noteCompleted(ctx: DecisionContext, nodeId: string, iteration: string): void {
  if (!compensable(ctx, nodeId)) return;
  const { row, log } = readLog(ctx);
  const entry = { node: nodeId, iteration };
  // A rerun that completes an instance again moves it to the end: its latest completion counts.
  const completed = [...log.completed.filter((e) => !same(e, entry)), entry];
  writeLog(ctx, row, { ...log, completed });
}

/**
 * Starts compensating a run that fails for good, instead of failing it now; false when the workflow has
 * no compensations. The first compensation is taken by a `compensation_due` event left in the run's
 * inbox: it is decided after every completion that committed before this decision cancelled the open
 * work (the write cancels before it appends to the inbox), so a step that completed in a race with the
 * failure is compensated too (tests: "compensates a step completed without the run lock between the
 * failure's reads and its write", and "a crash right after the failing commit loses nothing" for the
 * decision asked for in the same transaction).
 */
export function beginCompensation(ctx: DecisionContext, error: RunError): boolean {
  if (!ctx.workflow.compensable || ctx.run.status !== 'running') return false;
  const { row, log } = readLog(ctx);
  ctx.emit({ kind: 'cancel_open_work', reason: error.message });
  ctx.emit({ kind: 'set_run_status', status: 'compensating', reopen: false });
  writeLog(ctx, row, {
    ...log,
    phase: 'compensating',
    error,
    todo: log.completed,
    current: null,
    compensated: [],
  });
  ctx.record('run.compensating', {
    error: error as unknown as Json,
    steps: [...log.completed].reverse().map(label),
  });
  ctx.emit({ kind: 'defer', event: { kind: 'compensation_due' } });
  ctx.emit({ kind: 'request_decision', reason: 'compensation' });
  return true;
}

/**
 * Decides an event of a compensating run; false when the event is not the saga's (operator actions,
 * refused reports, late failures), which the caller decides as usual.
 */
export async function onCompensating(ctx: DecisionContext, event: RunEvent): Promise<boolean> {
  switch (event.kind) {
    case 'compensation_due':
      await next(ctx);
      return true;
    case 'node_completed':
      await compensatingCompleted(ctx, event);
      return true;
    case 'node_failed':
      return compensationFailed(ctx, event);
    case 'timer_fired': {
      const { purpose } = event;
      if (purpose.kind !== 'retry' || compensatedNodeOf(purpose.nodeId) === null) return true;
      const task = ctx.task(purpose.nodeId, purpose.iteration);
      const failed = task?.status === 'failed' || task?.status === 'timed_out';
      if (!task || task.attempt !== purpose.attempt || !failed) return true;
      const node = ctx.workflow.node(purpose.nodeId) as TaskNode;
      schedule(ctx, node, purpose.iteration, purpose.attempt + 1, task.input);
      return true;
    }
    default:
      return false;
  }
}

/**
 * An attempt completed in a compensating run: a compensation (the next one is taken), or a step that
 * completed before the failure cancelled it, decided only now (it is compensated next).
 */
async function compensatingCompleted(
  ctx: DecisionContext,
  event: Extract<RunEvent, { kind: 'node_completed' }>,
): Promise<void> {
  const task = ctx.task(event.nodeId, event.iteration);
  if (!task || task.attempt !== event.attempt || task.status !== 'completed') return; // stale
  const at = { nodeId: event.nodeId, iteration: event.iteration, attempt: event.attempt };
  ctx.record('task.completed', { output: task.output }, at);
  const of = compensatedNodeOf(event.nodeId);
  const { row, log } = readLog(ctx);
  if (of === null) {
    if (!compensable(ctx, event.nodeId)) return;
    const entry = { node: event.nodeId, iteration: event.iteration };
    if (log.completed.some((e) => same(e, entry))) return;
    writeLog(ctx, row, { ...log, completed: [...log.completed, entry], todo: [...log.todo, entry] });
    return;
  }
  const done = { node: of, iteration: event.iteration };
  if (!log.current || !same(log.current, done)) return;
  writeLog(ctx, row, { ...log, current: null, compensated: [...log.compensated, done] });
  await next(ctx);
}

/**
 * A compensation's attempt failed: retried by its own policy, or the compensation gives up. False for
 * any other node's failure (decided as usual).
 */
function compensationFailed(
  ctx: DecisionContext,
  event: Extract<RunEvent, { kind: 'node_failed' }>,
): boolean {
  const of = compensatedNodeOf(event.nodeId);
  if (of === null) return false;
  const task = ctx.task(event.nodeId, event.iteration);
  if (!task || task.attempt !== event.attempt) return true; // stale
  const at = { nodeId: event.nodeId, iteration: event.iteration, attempt: event.attempt };
  const node = ctx.workflow.node(event.nodeId) as TaskNode;
  if (event.error.retryable && event.attempt < node.retry.maxAttempts) {
    const delayMs = retryDelayMs(node.retry, event.attempt);
    const error = event.error as unknown as Json;
    ctx.record('task.failed', { error, final: false, retry_in_ms: delayMs }, at);
    if (delayMs === 0) schedule(ctx, node, event.iteration, event.attempt + 1, task.input);
    else
      ctx.emit({
        kind: 'set_timer',
        dueAt: new Date(ctx.now.getTime() + delayMs),
        purpose: { kind: 'retry', ...at },
      });
    return true;
  }
  ctx.record('task.failed', { error: event.error as unknown as Json, final: true }, at);
  const tries = event.attempt > 1 ? ` after ${event.attempt} attempts` : '';
  giveUp(ctx, { node: of, iteration: event.iteration }, `${event.error.message}${tries}`);
  return true;
}

/**
 * Looks at a compensating run again, for the stuck-run sweeper: nothing can wake it (an event was lost: the
 * `compensation_due` that takes the next compensation, or the report of the one running). Decides what the
 * lost event would have: the running compensation's outcome if it has one (completed, or failed and then
 * retried or given up by its policy), else the next compensation, or the end of the run when none is left.
 * Records `run.repaired` (invariant 26; test: "repairs a compensating run whose compensation report was
 * lost").
 */
export async function sweepCompensation(ctx: DecisionContext, idleMs: number): Promise<void> {
  const { row, log } = readLog(ctx);
  if (ctx.run.status !== 'compensating' || log.phase !== 'compensating') return;
  ctx.record('run.repaired', { by: 'sweeper', idle_ms: idleMs });
  const current = log.current;
  if (!current) {
    await next(ctx);
    return;
  }
  const nodeId = compensationNodeId(current.node);
  const task = ctx.task(nodeId, current.iteration);
  if (task?.status === 'completed') {
    await onCompensating(ctx, {
      kind: 'node_completed',
      nodeId,
      iteration: current.iteration,
      attempt: task.attempt,
    });
    return;
  }
  if ((task?.status === 'failed' || task?.status === 'timed_out') && task.error) {
    const event = { nodeId, iteration: current.iteration, attempt: task.attempt, error: task.error };
    await onCompensating(ctx, { kind: 'node_failed', ...event });
    return;
  }
  if (!task || task.status === 'cancelled') {
    // No attempt to wait for (a decision writes the mark and the attempt together): take it again.
    writeLog(ctx, row, { ...log, current: null, todo: [...log.todo, current] });
    await next(ctx);
  }
}

/** Schedules the next compensation, or ends the run when none is left. One runs at a time. */
async function next(ctx: DecisionContext): Promise<void> {
  const { row, log } = readLog(ctx);
  if (log.phase !== 'compensating' || log.current) return;
  const entry = log.todo[log.todo.length - 1];
  if (!entry) {
    const error: RunError = {
      ...(log.error ?? { message: 'the run failed', reason: 'error' }),
      compensation: { status: 'completed', compensated: log.compensated.map(label) },
    };
    writeLog(ctx, row, { ...log, phase: 'ended' });
    ctx.emit({ kind: 'finish_run', status: 'failed', output: null, error });
    ctx.record('run.compensated', { steps: log.compensated.map(label) });
    ctx.record('run.failed', { error: error as unknown as Json });
    return;
  }
  writeLog(ctx, row, { ...log, todo: log.todo.slice(0, -1), current: entry });
  const node = ctx.workflow.node(compensationNodeId(entry.node)) as TaskNode;
  const mapping = ctx.workflow.mapping(entry.node, 'compensate.input');
  let input: Json;
  if (mapping) {
    const result = await evaluateAt(ctx, mapping, positionOf(ctx, entry.node, entry.iteration));
    if (!result.ok) {
      const error: TaskError = { message: result.message, reason: 'input', retryable: false };
      const attempt = (ctx.task(node.id, entry.iteration)?.attempt ?? 0) + 1;
      ctx.emit({
        kind: 'create_task',
        nodeId: node.id,
        iteration: entry.iteration,
        attempt,
        status: 'failed',
        input: null,
        output: null,
        error,
        arrivals: [],
        dispatch: null,
      });
      ctx.record(
        'task.failed',
        { error: error as unknown as Json, final: true },
        { nodeId: node.id, iteration: entry.iteration, attempt },
      );
      giveUp(ctx, entry, result.message);
      return;
    }
    input = result.value;
  } else input = ctx.task(entry.node, entry.iteration)?.output ?? null;
  schedule(ctx, node, entry.iteration, (ctx.task(node.id, entry.iteration)?.attempt ?? 0) + 1, input);
}

function schedule(
  ctx: DecisionContext,
  node: TaskNode,
  iteration: string,
  attempt: number,
  input: Json | null,
): void {
  ctx.emit({
    kind: 'create_task',
    nodeId: node.id,
    iteration,
    attempt,
    status: 'queued',
    input,
    output: null,
    error: null,
    arrivals: [],
    dispatch: { taskType: node.taskType, priority: node.priority, timeoutMs: node.timeoutMs },
  });
  ctx.record(
    'task.scheduled',
    {
      task_type: node.taskType,
      compensates: compensatedNodeOf(node.id),
      ...(attempt > 1 ? { retry: true } : {}),
    },
    { nodeId: node.id, iteration, attempt },
  );
}

/** A compensation failed for good: the rest are not run, and the run ends failed. */
function giveUp(ctx: DecisionContext, entry: Entry, why: string): void {
  const { row, log } = readLog(ctx);
  const first = log.error ?? { message: 'the run failed', reason: 'error' };
  const pending = [...log.todo].reverse().map(label);
  const error: RunError = {
    message: `${first.message}; then compensating ${label(entry)} failed: ${why}`,
    ...(first.node !== undefined ? { node: first.node } : {}),
    reason: 'compensation_failed',
    compensation: {
      status: 'failed',
      compensated: log.compensated.map(label),
      failed: label(entry),
      pending,
    },
  };
  writeLog(ctx, row, { ...log, phase: 'ended', current: null });
  ctx.emit({ kind: 'cancel_open_work', reason: error.message });
  ctx.emit({ kind: 'finish_run', status: 'failed', output: null, error });
  ctx.record('run.compensation_failed', { failed: label(entry), why, pending });
  ctx.record('run.failed', { error: error as unknown as Json });
}
