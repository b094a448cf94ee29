import { HTTP_TASK_TYPE, type HttpRequestInput } from '../definition/http-request.js';
import type {
  EventNode,
  HttpNode,
  NodeDef,
  RetryPolicy,
  StartWorkflowNode,
  SubWorkflowNode,
} from '../definition/node-types.js';
import { isJsonObject, type Json } from '../json.js';
import { childRunId, stableId } from '../stable-id.js';
import type { DecisionContext } from './context.js';
import type { EventMessage } from './effects.js';
import { failRun, propagate, putTask } from './flow.js';
import { evaluateAt, innermost, itemOf, positionOf } from './scope.js';
import type { Arrival, TaskError, TaskState } from './state.js';

/**
 * Starting the nodes that act outside the run. Each writes its task row and, for what must leave the
 * run, an `effect` action the shell puts in the outbox in the same transaction.
 */

/** The task type shown for sub-workflow attempts (never queued: no worker runs them). */
export const SUB_WORKFLOW_TASK_TYPE = 'weft.sub_workflow';

/** Extra time an http attempt gets past its request timeout, so a slow answer is reported, not reaped. */
export const HTTP_ATTEMPT_GRACE_MS = 5_000;

type EffectNode = SubWorkflowNode | StartWorkflowNode | EventNode | HttpNode;

/** Starts a `sub_workflow`, `start_workflow`, `event` or `http` node (attempt 1, or its waiting join row). */
export async function activateEffectNode(
  ctx: DecisionContext,
  node: EffectNode,
  iteration: string,
  waiting: TaskState | null,
  arrivals: readonly Arrival[],
): Promise<void> {
  const attempt = waiting?.attempt ?? 1;
  const at = { nodeId: node.id, iteration, attempt };
  const computed = await evaluate(ctx, node, iteration);
  const input = computed.ok && node.kind === 'http' ? httpRequest(node, computed.value) : computed;
  if (!input.ok) {
    const error: TaskError = { message: input.message, reason: 'input', retryable: false };
    putTask(ctx, node.id, iteration, waiting, { status: 'failed', input: null, error, arrivals });
    ctx.record('task.failed', { error: error as unknown as Json, final: true }, at);
    failRun(ctx, { message: `node "${node.id}" failed: ${input.message}`, node: node.id, reason: 'input' });
    return;
  }
  switch (node.kind) {
    case 'sub_workflow':
      putTask(ctx, node.id, iteration, waiting, {
        status: 'running',
        input: input.value,
        arrivals,
        dispatch: { taskType: SUB_WORKFLOW_TASK_TYPE, priority: 0, timeoutMs: node.timeoutMs },
      });
      startChild(ctx, node, iteration, attempt, input.value, false);
      return;
    case 'start_workflow': {
      const runId = childRunId(ctx.now, ctx.run.id, node.id, iteration, attempt);
      putTask(ctx, node.id, iteration, waiting, {
        status: 'completed',
        input: input.value,
        output: { run_id: runId },
        arrivals,
      });
      emitStart(ctx, node, iteration, attempt, input.value, runId, true);
      await propagate(ctx, node.id, iteration, true);
      return;
    }
    case 'event': {
      const message: EventMessage = {
        id: stableId('weft.event', ctx.run.id, node.id, iteration, attempt),
        type: node.topic ?? node.id,
        time: ctx.now.toISOString(),
        source: {
          run_id: ctx.run.id,
          definition: ctx.run.definition,
          version: ctx.run.version,
          node_id: node.id,
          iteration,
          attempt,
        },
        data: input.value,
      };
      putTask(ctx, node.id, iteration, waiting, {
        status: 'completed',
        input: input.value,
        output: { event_id: message.id },
        arrivals,
      });
      ctx.emit({
        kind: 'effect',
        effect: { kind: 'publish', sink: node.sink, topic: node.topic, message },
        task: at,
      });
      ctx.record('event.published', { sink: node.sink, topic: node.topic, event_id: message.id }, at);
      await propagate(ctx, node.id, iteration, true);
      return;
    }
    case 'http':
      putTask(ctx, node.id, iteration, waiting, {
        status: 'queued',
        input: input.value,
        arrivals,
        dispatch: httpDispatch(node),
      });
      ctx.record('task.scheduled', { task_type: HTTP_TASK_TYPE }, at);
      return;
  }
}

/**
 * Evaluates the node's mapping (`input`, `payload` or `request`) where the node is. Without one, a child's
 * input or an event's payload is the item of the map around it, or the run input outside maps.
 */
async function evaluate(
  ctx: DecisionContext,
  node: EffectNode,
  iteration: string,
): Promise<{ ok: true; value: Json } | { ok: false; message: string }> {
  const field = node.kind === 'event' ? 'payload' : node.kind === 'http' ? 'request' : 'input';
  const mapping = ctx.workflow.mapping(node.id, field);
  const at = positionOf(ctx, node.id, iteration);
  if (!mapping) {
    const map = innermost(ctx, at.container, 'map');
    return { ok: true, value: map === null ? ctx.run.input : itemOf(ctx, map, iteration) };
  }
  return evaluateAt(ctx, mapping, at);
}

/** The retry policy a failed attempt of this node is judged by, or null for nodes that never retry. */
export function retryPolicyOf(node: NodeDef): RetryPolicy | null {
  return node.kind === 'task' || node.kind === 'http' || node.kind === 'sub_workflow' ? node.retry : null;
}

/** Schedules the attempt after `failedAttempt` of an `http` or `sub_workflow` node (a new child). */
export function retryEffectNode(
  ctx: DecisionContext,
  node: NodeDef,
  iteration: string,
  failedAttempt: number,
  input: Json | null,
): void {
  const attempt = failedAttempt + 1;
  const at = { nodeId: node.id, iteration, attempt };
  const base = { kind: 'create_task', ...at, output: null, error: null, arrivals: [] } as const;
  if (node.kind === 'http') {
    ctx.emit({ ...base, status: 'queued', input, dispatch: httpDispatch(node) });
    ctx.record('task.scheduled', { task_type: HTTP_TASK_TYPE, retry: true }, at);
  } else if (node.kind === 'sub_workflow') {
    ctx.emit({
      ...base,
      status: 'running',
      input,
      dispatch: { taskType: SUB_WORKFLOW_TASK_TYPE, priority: 0, timeoutMs: node.timeoutMs },
    });
    startChild(ctx, node, iteration, attempt, input ?? ctx.run.input, false);
  }
}

/**
 * Asks for a child run (through the outbox), after the attempt it belongs to was written. The id is
 * computed from the attempt's identity, so a retried node gets a new child and a redelivered start gets
 * the same one.
 */
function startChild(
  ctx: DecisionContext,
  node: SubWorkflowNode,
  iteration: string,
  attempt: number,
  input: Json,
  detached: boolean,
): void {
  const runId = childRunId(ctx.now, ctx.run.id, node.id, iteration, attempt);
  emitStart(ctx, node, iteration, attempt, input, runId, detached);
}

function emitStart(
  ctx: DecisionContext,
  node: SubWorkflowNode | StartWorkflowNode,
  iteration: string,
  attempt: number,
  input: Json,
  runId: string,
  detached: boolean,
): void {
  const at = { nodeId: node.id, iteration, attempt };
  ctx.emit({
    kind: 'effect',
    effect: {
      kind: 'start_run',
      runId,
      definition: node.definition,
      version: node.version,
      input,
      parent: { runId: ctx.run.id, ...at },
      detached,
    },
    task: at,
  });
  ctx.record(
    detached ? 'workflow.started' : 'child.requested',
    { run_id: runId, definition: node.definition, version: node.version },
    at,
  );
}

function httpDispatch(node: HttpNode) {
  return {
    taskType: HTTP_TASK_TYPE,
    priority: node.priority,
    timeoutMs: node.timeoutMs + HTTP_ATTEMPT_GRACE_MS,
  };
}

/** Turns an http node's evaluated mapping into the request its task carries. */
function httpRequest(
  node: HttpNode,
  value: Json,
): { ok: true; value: Json } | { ok: false; message: string } {
  if (!isJsonObject(value)) return { ok: false, message: 'request: the request mapping must give a map' };
  const url = value.url;
  if (typeof url !== 'string' || !/^https?:\/\/\S+$/i.test(url)) {
    return {
      ok: false,
      message: `request.url: ${JSON.stringify(url)} is not an http or https URL (quote literal text: "'https://...'")`,
    };
  }
  const headers: { [name: string]: string } = {};
  if (value.headers !== undefined && value.headers !== null) {
    if (!isJsonObject(value.headers))
      return { ok: false, message: 'request.headers: must give a map of header names to values' };
    for (const [name, v] of Object.entries(value.headers)) {
      if (v === null) continue;
      if (typeof v === 'object')
        return { ok: false, message: `request.headers.${name}: a header value must be text or a number` };
      headers[name.toLowerCase()] = String(v);
    }
  }
  const request: HttpRequestInput = {
    url,
    method: node.method,
    headers,
    ...(value.body !== undefined ? { body: value.body } : {}),
    timeout_ms: node.timeoutMs,
    success: node.success,
  };
  return { ok: true, value: request as unknown as Json };
}
