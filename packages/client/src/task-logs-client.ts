import { ApiClient } from './api-client.js';
import type { Json } from './types.js';

/** How bad a log line is. */
export type TaskLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** A line a handler wrote, as a worker sends it. */
export interface TaskLogWrite {
  readonly level: TaskLogLevel;
  readonly message: string;
  /** Structured values that go with the message: a JSON object. */
  readonly fields?: { readonly [key: string]: Json };
  /** When the handler wrote it (ISO time). */
  readonly at?: string;
}

/** The attempt a worker holds, and its lease: log writes are fenced by it. */
export interface TaskLogHolder {
  readonly run_id: string;
  readonly task_id: string;
  readonly attempt: number;
  readonly lease_token: string;
}

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
    return this.call('POST', `/v1/tasks/${encodeURIComponent(holder.task_id)}/logs`, {
      run_id: holder.run_id,
      attempt: holder.attempt,
      lease_token: holder.lease_token,
      lines,
    });
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
