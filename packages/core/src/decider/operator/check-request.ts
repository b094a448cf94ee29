import { compensatedNodeOf } from '../../definition/compensation.js';
import type { Workflow } from '../../definition/workflow.js';
import type { Json } from '../../json.js';
import { err, ok, type Result } from '../../result.js';
import type { RunEvent } from '../events.js';
import type { Requester } from '../operator-events.js';
import { isTerminalRun, type RunView, type TaskState } from '../state.js';
import { reopensBody } from './body-rerun.js';
import { RETRYABLE_RUN_STATUSES } from './decide-operator.js';
import { instanceLabel } from './instances.js';
import { overrideTarget } from './override.js';
import { rerunSet, retrySet } from './run-again.js';

/** An operator's request, before it is checked against the run. */
export type OperatorRequest = Requester &
  (
    | { readonly kind: 'pause' | 'resume' | 'cancel' | 'terminate' | 'retry' }
    | { readonly kind: 'rerun'; readonly nodeId: string; readonly iteration?: string }
    | { readonly kind: 'skip'; readonly nodeId: string; readonly iteration?: string; readonly output?: Json }
    | {
        readonly kind: 'complete';
        readonly nodeId: string;
        readonly iteration?: string;
        readonly output: Json;
      }
    | {
        readonly kind: 'fail';
        readonly nodeId: string;
        readonly iteration?: string;
        readonly error: { readonly message: string; readonly retryable?: boolean; readonly details?: Json };
      }
  );

/** The kinds of operator request. */
export type OperatorRequestKind = OperatorRequest['kind'];

/** Why a request was refused: a stable code, an HTTP-like status and a message that says what to do. */
export interface Refusal {
  readonly code: string;
  readonly status: 400 | 404 | 409;
  readonly message: string;
}

/** True for requests that act on one task (and need its latest attempt, locked). */
export function isTaskRequest(
  request: OperatorRequest,
): request is Extract<OperatorRequest, { kind: 'skip' | 'complete' | 'fail' }> {
  return request.kind === 'skip' || request.kind === 'complete' || request.kind === 'fail';
}

/**
 * Checks an operator's request against the run as it is under its row lock, and turns it into the event
 * to decide. `tasks` holds the latest attempts the request reads: every instance of the run for retry,
 * rerun and resume; the one instance for a task request. Pure: the same state always gives the same
 * answer, and the decider applies the same rules again (so a request that slipped through changes nothing).
 */
export function checkOperatorRequest(
  workflow: Workflow,
  run: RunView,
  tasks: readonly TaskState[],
  request: OperatorRequest,
): Result<RunEvent, Refusal> {
  const by: Requester = { by: request.by, ...(request.reason ? { reason: request.reason } : {}) };
  switch (request.kind) {
    case 'pause':
    case 'resume':
    case 'cancel':
    case 'terminate':
      return checkRunStatus(run, request.kind, by);
    case 'retry':
      return checkRetry(workflow, run, tasks, by);
    case 'rerun':
      return checkRerun(workflow, run, tasks, request, by);
    case 'skip':
    case 'complete':
    case 'fail':
      return checkTask(workflow, run, tasks, request, by);
  }
}

/** Pause, resume, cancel and terminate: allowed by the run's status alone. */
function checkRunStatus(
  run: RunView,
  kind: 'pause' | 'resume' | 'cancel' | 'terminate',
  by: Requester,
): Result<RunEvent, Refusal> {
  const is = `run ${run.id} is ${run.status}`;
  if (kind === 'pause') {
    if (run.status !== 'running') return refuse('run_not_running', `${is}; only a running run can be paused`);
    return ok({ kind: 'run_paused', ...by });
  }
  if (kind === 'resume') {
    if (run.status !== 'paused')
      return refuse('run_not_paused', `${is}, not paused; there is nothing to resume`);
    return ok({ kind: 'run_resumed', ...by });
  }
  const verb = kind === 'cancel' ? 'cancelled' : 'terminated';
  if (run.status !== 'running' && run.status !== 'paused' && run.status !== 'compensating') {
    return refuse(
      'run_not_active',
      `run ${run.id} is already ${run.status}; only a running, paused or compensating run can be ${verb}`,
    );
  }
  if (kind === 'terminate' && !by.reason?.trim()) {
    return err({
      code: 'reason_required',
      status: 400,
      message: 'say why: terminating a run needs a reason, which is kept in its history',
    });
  }
  return ok({ kind: kind === 'cancel' ? 'run_cancelled' : 'run_terminated', ...by });
}

function checkRetry(
  workflow: Workflow,
  run: RunView,
  tasks: readonly TaskState[],
  by: Requester,
): Result<RunEvent, Refusal> {
  const is = `run ${run.id} is ${run.status}`;
  if (wasCompensated(tasks)) return refuse('run_compensated', compensatedMessage(run, 'retried'));
  if (run.status === 'completed') {
    return refuse(
      'run_completed',
      `${is}: nothing failed, so there is nothing to retry; rerun it from a node to run that node and what follows again`,
    );
  }
  if (!RETRYABLE_RUN_STATUSES.includes(run.status)) {
    return refuse(
      'run_not_finished',
      `${is}; retry restarts a failed, cancelled or terminated run: wait for it to finish, or cancel or terminate it first`,
    );
  }
  if (retrySet(tasks).length === 0)
    return refuse('nothing_to_retry', `${is}, but every node of it finished; there is nothing to retry`);
  const body = reopensBody(workflow, retrySet(tasks));
  if (body) return refuse('loop_or_map', `run ${run.id} cannot be retried: ${body}`);
  return ok({ kind: 'run_retried', ...by });
}

function checkRerun(
  workflow: Workflow,
  run: RunView,
  tasks: readonly TaskState[],
  request: Extract<OperatorRequest, { kind: 'rerun' }>,
  by: Requester,
): Result<RunEvent, Refusal> {
  const known = knownNode(workflow, run, request.nodeId);
  if (!known.ok) return known;
  if (wasCompensated(tasks)) return refuse('run_compensated', compensatedMessage(run, 'rerun'));
  const iteration = request.iteration ?? '';
  if (!isTerminalRun(run.status)) {
    return refuse(
      'run_not_finished',
      `run ${run.id} is ${run.status}; rerun restarts a finished run: wait for it to finish, or cancel or terminate it first`,
    );
  }
  const label = instanceLabel({ nodeId: request.nodeId, iteration });
  if (!tasks.some((t) => t.nodeId === request.nodeId && t.iteration === iteration)) {
    return refuse(
      'node_not_started',
      `node "${label}" has not run in run ${run.id}, so it cannot run again; retry the run instead`,
    );
  }
  const body = reopensBody(workflow, rerunSet(workflow, tasks, { nodeId: request.nodeId, iteration }));
  if (body) return refuse('loop_or_map', `run ${run.id} cannot be rerun from "${label}": ${body}`);
  return ok({ kind: 'run_rerun', nodeId: request.nodeId, iteration, ...by });
}

function checkTask(
  workflow: Workflow,
  run: RunView,
  tasks: readonly TaskState[],
  request: Extract<OperatorRequest, { kind: 'skip' | 'complete' | 'fail' }>,
  by: Requester,
): Result<RunEvent, Refusal> {
  const verb = { skip: 'skipped', complete: 'completed', fail: 'failed' }[request.kind];
  const known = knownNode(workflow, run, request.nodeId);
  if (!known.ok) return known;
  const iteration = request.iteration ?? '';
  const label = instanceLabel({ nodeId: request.nodeId, iteration });
  const node = workflow.node(request.nodeId);
  if (node.kind !== 'task')
    return refuse(
      'not_a_task',
      `node "${label}" is a ${node.kind} node; only task nodes are ${verb} by hand`,
    );
  if (run.status !== 'running' && run.status !== 'paused') {
    return refuse(
      'run_not_active',
      `run ${run.id} is ${run.status}; a task can be ${verb} by hand only in a running or paused run (retry or rerun a finished one)`,
    );
  }
  const task = tasks.find((t) => t.nodeId === request.nodeId && t.iteration === iteration) ?? null;
  if (!task) return refuse('node_not_started', `node "${label}" has not started in run ${run.id} yet`);
  if (!overrideTarget(task)) {
    const why =
      task.status === 'waiting'
        ? 'is waiting for its other branches and has not started'
        : `is already ${task.status.replace('_', ' ')} (attempt ${task.attempt}); rerun the run from it to run it again`;
    return refuse('task_not_open', `node "${label}" ${why}`);
  }
  const base = { kind: 'task_overridden' as const, nodeId: request.nodeId, iteration, ...by };
  switch (request.kind) {
    case 'complete':
      return ok({ ...base, outcome: { kind: 'completed', output: request.output } });
    case 'skip':
      return ok({ ...base, outcome: { kind: 'skipped', output: request.output ?? null } });
    case 'fail':
      return ok({
        ...base,
        outcome: {
          kind: 'failed',
          error: {
            message: request.error.message,
            reason: 'error',
            retryable: request.error.retryable ?? false,
            type: 'operator',
            ...(request.error.details !== undefined ? { details: request.error.details } : {}),
          },
        },
      });
  }
}

function knownNode(workflow: Workflow, run: RunView, nodeId: string): Result<true, Refusal> {
  if (workflow.graph.nodes.has(nodeId)) return ok(true);
  const some = [...workflow.graph.nodes.keys()].slice(0, 20).join(', ');
  return err({
    code: 'node_not_found',
    status: 404,
    message: `${run.definition} v${run.version} has no node "${nodeId}" (its nodes: ${some})`,
  });
}

function refuse(code: string, message: string): { readonly ok: false; readonly error: Refusal } {
  return err({ code, status: 409, message });
}

/** True when the run ran a compensation: what it did has been (partly) undone. */
function wasCompensated(tasks: readonly TaskState[]): boolean {
  return tasks.some((t) => compensatedNodeOf(t.nodeId) !== null);
}

function compensatedMessage(run: RunView, verb: string): string {
  return `run ${run.id} ran its compensations, which undid its completed steps, so it cannot be ${verb}; start a new run instead`;
}
