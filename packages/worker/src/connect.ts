import { type DispatchInfo, type TaskProtocolClient, WeftApiError } from '@weft/client/tasks';
import type { Problems } from './problems.js';

/** How long `start()` keeps trying to reach the server before it fails (10 s). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Asks the server how it dispatches tasks, retrying with backoff while it cannot be reached or answers
 * 5xx, for up to `timeoutMs`. Fails at once when the address answers but not as a Weft server (a 4xx),
 * and with a clear error when nothing answered in time. Returns null when `stopped()` turns true.
 */
export async function reachServer(
  client: TaskProtocolClient,
  problems: Problems,
  timeoutMs: number,
  stopped: () => boolean,
): Promise<DispatchInfo | null> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (let wait = 200; !stopped(); wait = Math.min(wait * 2, 2000)) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    try {
      const info = await client.dispatchInfo(AbortSignal.timeout(left));
      problems.ok('connect');
      return info;
    } catch (e) {
      last = e;
      if (e instanceof WeftApiError && e.status >= 400 && e.status < 500) {
        throw new Error(
          `${client.url} answered GET /v1/tasks/dispatch with ${e.status} (${e.message}): check that the worker's url is a Weft server's address`,
          { cause: e },
        );
      }
      problems.report(`cannot reach the Weft server at ${client.url}; retrying`, e, 'connect');
      await new Promise((r) => setTimeout(r, Math.min(wait, Math.max(0, deadline - Date.now()))));
    }
  }
  if (stopped()) return null;
  const why = last instanceof Error ? ` (${last.message})` : '';
  throw new Error(
    `could not reach the Weft server at ${client.url} within ${timeoutMs} ms${why}: check the worker's url and that the server is running, or raise connectTimeoutMs`,
    { cause: last },
  );
}
