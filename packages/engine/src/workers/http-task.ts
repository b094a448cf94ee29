import { context, INVALID_SPAN_CONTEXT, trace } from '@opentelemetry/api';
import { type HttpRequestInput, type Json, type StatusMatch, type TaskError, WeftError } from '@weft/core';
import { refusalIn } from '../outbound/address-policy.js';
import type { Outbound } from '../outbound/outbound.js';
import { outboundFetch } from '../outbound/outbound-fetch.js';
import { fillSecretsInJson, redactSecrets, secretNamesInJson } from '../secrets/placeholders.js';
import { formatTraceparent } from '../tracing/traceparent.js';
import type { SystemTaskHandler, SystemTaskOutcome } from './system-runner.js';

/** Largest response body kept as the node's output. */
const MAX_BODY_BYTES = 1024 * 1024;

/** True when `status` is one of `success` (codes, or classes such as `2xx`). */
export function statusMatches(status: number, success: readonly StatusMatch[]): boolean {
  return success.some((m) =>
    typeof m === 'number' ? m === status : Math.floor(status / 100) === Number(m[0]),
  );
}

/** Resolves the secrets an `http` task's placeholders name, for the run it belongs to. */
export type SecretResolver = (runId: string, names: readonly string[]) => Promise<Map<string, string>>;

/**
 * The handler of built-in `http` tasks, calling out under `outbound`'s policy. Secret placeholders in the
 * url, headers and body are filled at the moment of the call, and their values are redacted from what the
 * task gives back; a secret that is not set fails the task for good.
 */
export function httpTaskHandler(outbound: Outbound, secrets: SecretResolver): SystemTaskHandler {
  return async (input, signal, task) => {
    const names = secretNamesInJson(input);
    let values = new Map<string, string>();
    try {
      values = await secrets(task.runId, names);
    } catch (e) {
      const message = (e as Error).message;
      return { kind: 'failed', error: { message, reason: 'error', retryable: !(e instanceof WeftError) } };
    }
    const outcome = await runHttpTask(
      fillSecretsInJson(input, values),
      signal,
      outbound,
      (input as unknown as HttpRequestInput).url,
    );
    return redactSecrets(outcome as unknown as Json, values) as unknown as SystemTaskOutcome;
  };
}

/**
 * Runs the request of a built-in `http` task. A success status gives `{status, headers, body}` (the body
 * parsed when it is JSON). A 5xx, 408 or 429 answer, a network error or no answer in time fail the
 * attempt as retryable; any other status fails it for good, with the response in the error's details. A
 * target the outbound policy refuses fails it for good, naming the setting that opens it.
 */
export async function runHttpTask(
  input: Json,
  signal: AbortSignal,
  outbound: Outbound,
  shownUrl?: string,
): Promise<SystemTaskOutcome> {
  const request = input as unknown as HttpRequestInput;
  const what = `${request.method} ${shownUrl ?? request.url}`;
  const headers: Record<string, string> = { 'user-agent': 'weft', ...request.headers };
  // The called service joins the run's trace (the task's span is active), unless the node sets its own.
  const traceparent = formatTraceparent(trace.getSpanContext(context.active()) ?? INVALID_SPAN_CONTEXT);
  if (traceparent && !Object.keys(headers).some((h) => h.toLowerCase() === 'traceparent'))
    headers.traceparent = traceparent;
  let body: string | undefined;
  if (request.body !== undefined && request.method !== 'GET' && request.method !== 'HEAD') {
    body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
    if (typeof request.body !== 'string' && !headers['content-type'])
      headers['content-type'] = 'application/json';
  }
  const timeout = AbortSignal.timeout(request.timeout_ms);
  try {
    const response = await outboundFetch(
      request.url,
      {
        method: request.method,
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: AbortSignal.any([signal, timeout]),
        redirect: 'follow',
      },
      outbound.policy,
      outbound.agent,
    );
    const text = await readLimited(response);
    const output: Json = {
      status: response.status,
      headers: Object.fromEntries(response.headers.entries()),
      body: parseBody(text, response.headers.get('content-type')),
    };
    if (statusMatches(response.status, request.success)) return { kind: 'completed', output };
    const s = response.status;
    const error: TaskError = {
      message: `HTTP ${s} from ${what}`,
      reason: 'error',
      retryable: s >= 500 || s === 408 || s === 429,
      details: output,
    };
    return { kind: 'failed', error };
  } catch (e) {
    const refused = refusalIn(e);
    if (refused)
      return {
        kind: 'failed',
        error: { message: `${what}: ${refused.message}`, reason: 'error', retryable: false },
      };
    const error = e as Error & { cause?: { code?: string; message?: string } };
    const why = timeout.aborted
      ? `no answer within ${request.timeout_ms} ms`
      : signal.aborted
        ? 'the server stopped the request'
        : (error.cause?.code ?? error.cause?.message ?? error.message);
    return { kind: 'failed', error: { message: `${what} failed: ${why}`, reason: 'error', retryable: true } };
  }
}

async function readLimited(response: { body: ReadableStream<Uint8Array> | null }): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw new Error(`the response body is larger than ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseBody(text: string, contentType: string | null): Json {
  if (text === '') return null;
  if (contentType && /\bjson\b/i.test(contentType)) {
    try {
      return JSON.parse(text) as Json;
    } catch {
      return text;
    }
  }
  return text;
}
