import type { MappingSource } from '../expr/mapping.js';
import type { Json } from '../json.js';
import type { HttpMethod, HttpNode, StatusMatch } from './node-types.js';

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
