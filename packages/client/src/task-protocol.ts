import type { ClientOptions } from './connection.js';
import { HttpJson } from './http-json.js';
import type { TaskLogHolder, TaskLogWrite } from './task-logs-client.js';
import type { DispatchInfo, LeasedTask, Report, ReportResult } from './types.js';

/** Tasks a poll or a lease hands out, with the lease's length and how often to renew it. */
export interface Leased {
  tasks: LeasedTask[];
  lease_ms: number;
  heartbeat_ms: number;
}

/**
 * The worker protocol (`/v1/tasks/...`): what a worker process needs and nothing else, over Node's own
 * HTTP (see `HttpJson`), so that importing it (`@weft/client/tasks`) does not load the full client.
 * The calls and answers are those of `WeftClient`'s methods of the same names.
 */
export class TaskProtocolClient {
  private readonly http: HttpJson;

  constructor(options: ClientOptions) {
    this.http = new HttpJson(options);
  }

  /** The server's base URL. */
  get url(): string {
    return this.http.url;
  }

  /** Where the server publishes tasks (its queue table, or Redis streams). */
  dispatchInfo(signal?: AbortSignal): Promise<DispatchInfo> {
    return this.http.call('GET', '/v1/tasks/dispatch', undefined, signal);
  }

  /** Leases up to `max` tasks, waiting up to `waitMs` for one to be ready. */
  poll(
    worker: string,
    taskTypes: readonly string[],
    max: number,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<Leased> {
    const body = { worker, task_types: taskTypes, max, wait_ms: waitMs };
    return this.http.call('POST', '/v1/tasks/poll', body, signal);
  }

  /** Renews leases; answers which are still held and which were lost. */
  heartbeat(
    worker: string,
    tasks: { run_id: string; task_id: string; attempt: number; lease_token: string }[],
  ): Promise<{ held: string[]; lost: string[] }> {
    return this.http.call('POST', '/v1/tasks/heartbeat', { worker, tasks });
  }

  /** Reports outcomes; with `next`, the server may hand back new tasks for the worker's free slots. */
  report(
    worker: string,
    reports: Report[],
    next?: { taskTypes: readonly string[]; max: number },
  ): Promise<{ results: ReportResult[]; tasks: LeasedTask[] }> {
    return this.http.call('POST', '/v1/tasks/report', {
      worker,
      reports,
      ...(next && next.max > 0 ? { next: { task_types: next.taskTypes, max: next.max } } : {}),
    });
  }

  /** Leases tasks named by queue messages (Redis): only those still queued at that attempt. */
  leaseById(
    worker: string,
    taskTypes: readonly string[],
    tasks: { run_id: string; task_id: string; attempt: number }[],
  ): Promise<Leased> {
    return this.http.call('POST', '/v1/tasks/lease', { worker, task_types: taskTypes, tasks });
  }

  /**
   * Appends log lines to the attempt `holder` holds (at most 500 a request). A stale attempt is refused
   * with a `WeftApiError` of code `lease_lost` (409): nothing was kept.
   */
  writeLogs(
    holder: TaskLogHolder,
    lines: readonly TaskLogWrite[],
  ): Promise<{ kept: number; dropped: number; truncated: boolean }> {
    return this.http.call('POST', `/v1/tasks/${encodeURIComponent(holder.task_id)}/logs`, {
      run_id: holder.run_id,
      attempt: holder.attempt,
      lease_token: holder.lease_token,
      lines,
    });
  }

  /** Closes the connections. */
  close(): Promise<void> {
    return this.http.close();
  }
}
