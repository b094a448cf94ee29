import type { MappingSource } from '../expr/mapping.js';
import type { Json } from '../json.js';
import type { TaskGates } from './limit-types.js';
import type { NodeCommon, RetryPolicy } from './types.js';

/**
 * Nodes whose work reaches outside the run: other runs, message sinks and HTTP services. Every one of
 * them acts through the transactional outbox or the task service, never from inside a decision.
 */

/** Starts a child run and waits for it: completes, fails or times out with the child. */
export interface SubWorkflowNode extends NodeCommon {
  readonly kind: 'sub_workflow';
  /** The child's definition name, in the parent's namespace. */
  readonly definition: string;
  /** A pinned version; the latest at the time the child starts when null. */
  readonly version: number | null;
  /** Mapping that computes the child's input; the parent's input when null. */
  readonly input: MappingSource | null;
  /** Each retry starts a new child. One attempt unless the node says otherwise. */
  readonly retry: RetryPolicy;
  /** Longest one child may run before the attempt times out (and the child is cancelled). */
  readonly timeoutMs: number | null;
}

/** Starts a run and moves on at once (fire and forget); its output is `{ run_id }`. */
export interface StartWorkflowNode extends NodeCommon {
  readonly kind: 'start_workflow';
  readonly definition: string;
  readonly version: number | null;
  readonly input: MappingSource | null;
}

/** Publishes a message to a sink configured on the server; its output is `{ event_id }`. */
export interface EventNode extends NodeCommon {
  readonly kind: 'event';
  /** The sink's name in the server's configuration. */
  readonly sink: string;
  /** Overrides the sink's stream, subject or routing key; also the message type. */
  readonly topic: string | null;
  /** Mapping that computes the message data; the run input when null. */
  readonly payload: MappingSource | null;
}

/** HTTP methods an `http` node may use. */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;

/** An HTTP method. */
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** A status code, or a class of them such as `2xx`. */
export type StatusMatch = number | `${1 | 2 | 3 | 4 | 5}xx`;

/**
 * Calls a URL from the server (a system task with the same leases as any task); output is the response.
 * Like a task node it may take semaphore permits and count against a rate limit while it runs.
 */
export interface HttpNode extends NodeCommon, TaskGates {
  readonly kind: 'http';
  /** Expression for the URL. */
  readonly url: string;
  readonly method: HttpMethod;
  /** Mapping for request headers. */
  readonly headers: MappingSource | null;
  /** Mapping for a JSON request body. */
  readonly body: MappingSource | null;
  /** Longest one request may take. */
  readonly timeoutMs: number;
  /** Status codes that count as success (default `2xx`). */
  readonly success: readonly StatusMatch[];
  readonly retry: RetryPolicy;
  readonly priority: number;
}

/** The task type of the built-in HTTP system task. Types starting with `weft.` are reserved for Weft. */
export const HTTP_TASK_TYPE = 'weft.http';

/** True for task types run by the server itself rather than by external workers. */
export function isSystemTaskType(taskType: string): boolean {
  return taskType.startsWith('weft.');
}

/** The request an `http` task carries as its input (what the system-task runner executes). */
export interface HttpRequestInput {
  readonly url: string;
  readonly method: HttpMethod;
  readonly headers: { [name: string]: string };
  readonly body?: Json;
  readonly timeout_ms: number;
  readonly success: readonly StatusMatch[];
}

/** An http node's expressions as one mapping (`request`): its URL, headers and body. */
export function httpRequestSource(node: HttpNode): MappingSource {
  const out: { [key: string]: Json } = { url: node.url };
  if (node.headers !== null) out.headers = node.headers;
  if (node.body !== null) out.body = node.body;
  return out;
}
