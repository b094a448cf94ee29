import { HTTP_TASK_TYPE, type HttpRequestInput } from '../../definition/http-request.js';
import type { HttpNode } from '../../definition/node-types.js';
import { isJsonObject, type Json } from '../../json.js';
import type { TaskDispatch } from '../actions.js';
import { putTask } from '../task-rows.js';
import type { NodeHandler } from './node-handler.js';
import { nodeInput } from './node-input.js';
import { failAtStart } from './outcome.js';

/** Extra time an http attempt gets past its request timeout, so a slow answer is reported, not reaped. */
export const HTTP_ATTEMPT_GRACE_MS = 5_000;

/**
 * An http node is a system task (`weft.http`) run by the servers themselves, leased and reported like any
 * task: reaching it queues attempt 1 carrying the request (URL, method, headers, body, timeout, success
 * codes), computed from its `request` mapping; a retry queues the next attempt with the same request.
 */
export const httpNode: NodeHandler<HttpNode> = {
  async activate(ctx, node, reach) {
    const { iteration, waiting, arrivals } = reach;
    const attempt = waiting?.attempt ?? 1;
    const computed = await nodeInput(ctx, node.id, iteration, 'request');
    const request = computed.ok ? httpRequest(node, computed.value) : computed;
    if (!request.ok) {
      failAtStart(ctx, node.id, reach, request.message, attempt);
      return;
    }
    putTask(ctx, node.id, iteration, waiting, {
      status: 'queued',
      input: request.value,
      arrivals,
      dispatch: httpDispatch(node),
    });
    ctx.record('task.scheduled', { task_type: HTTP_TASK_TYPE }, { nodeId: node.id, iteration, attempt });
  },

  retry(ctx, node, failed) {
    const at = { nodeId: node.id, iteration: failed.iteration, attempt: failed.attempt + 1 };
    ctx.emit({
      kind: 'create_task',
      ...at,
      status: 'queued',
      input: failed.input,
      output: null,
      error: null,
      arrivals: [],
      dispatch: httpDispatch(node),
    });
    ctx.record('task.scheduled', { task_type: HTTP_TASK_TYPE, retry: true }, at);
  },
};

function httpDispatch(node: HttpNode): TaskDispatch {
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
