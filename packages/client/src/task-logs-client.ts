import { ApiClient } from './api-client.js';
import type { TaskLogHolder, TaskLogLevel, TaskLogWrite } from './task-log-types.js';
import type { Json } from './types.js';

export type { TaskLogHolder, TaskLogLevel, TaskLogWrite } from './task-log-types.js';

/** A kept line, as `GET /v1/runs/{id}/logs` answers it. */
export interface TaskLogEntry {
  readonly id: string;
  readonly task_id: string;
  readonly node_id: string;
  readonly iteration: string;
  readonly attempt: number;
  readonly at: string;
  readonly level: TaskLogLevel;
  readonly message: string;
  readonly fields: Json | null;
}

/** Which lines of a run to read. */
export interface TaskLogFilter {
  readonly node?: string;
  readonly attempt?: number;
  /** Lines after this id (a page's `next_after`, or the last line's id). */
  readonly after?: string;
  readonly limit?: number;
}

/** Task logs over the HTTP API: a worker writes its handlers' lines, anyone who may read a run reads them. */
export class TaskLogsClient extends ApiClient {
  /**
   * Appends lines to the attempt `holder` holds (at most 500 a request). A stale attempt is refused with a
   * `WeftApiError` of code `lease_lost` (409): nothing was kept.
   */
  write(
    holder: TaskLogHolder,
    lines: readonly TaskLogWrite[],
  ): Promise<{ kept: number; dropped: number; truncated: boolean }> {
    return this.taskCalls.writeLogs(holder, lines);
  }

  /** A page of a run's lines, in the order they were kept. */
  read(
    runId: string,
    filter: TaskLogFilter = {},
  ): Promise<{ lines: TaskLogEntry[]; next_after: string | null }> {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(filter)) if (v !== undefined) q.set(k, String(v));
    const text = q.toString();
    return this.call('GET', `/v1/runs/${encodeURIComponent(runId)}/logs${text ? `?${text}` : ''}`);
  }
}
