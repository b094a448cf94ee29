import type { TaskLogHolder, TaskLogWrite } from './task-log-types.js';
import type { DispatchInfo, LeasedTask, Report, ReportBase, ReportResult } from './types.js';

/**
 * One JSON request of the worker protocol, resolving to the parsed answer: the transport a `TaskCalls`
 * speaks through (undici for `WeftClient`, Node's own HTTP for `TaskProtocolClient`). An error answer
 * rejects with `WeftApiError`.
 */
export type TaskSend = <T>(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  signal?: AbortSignal,
) => Promise<T>;

/** Tasks a poll or a lease hands out, with the lease's length and how often to renew it. */
export interface Leased {
  tasks: LeasedTask[];
  lease_ms: number;
  heartbeat_ms: number;
}

/** A task a worker holds, named with its lease: what a heartbeat renews. */
export type HeldTask = Pick<ReportBase, 'run_id' | 'task_id' | 'attempt' | 'lease_token'>;

/** A task named by a queue message, at the attempt the message was for. */
export type QueuedTask = Omit<HeldTask, 'lease_token'>;

/** What a report asks back: up to `max` new tasks of these types for the worker's free slots. */
export interface NextTasks {
  taskTypes: readonly string[];
  max: number;
}

/**
 * The worker protocol's calls (`/v1/tasks/...`), written once: each builds its request and reads its
 * answer, over whichever transport `send` is. It imports no transport, so `@weft/client/tasks` stays
 * free of undici.
 */
export class TaskCalls {
  constructor(private readonly send: TaskSend) {}

  /** Where the server publishes tasks (its queue table, or Redis streams). */
  dispatchInfo(signal?: AbortSignal): Promise<DispatchInfo> {
    return this.send('GET', '/v1/tasks/dispatch', undefined, signal);
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
    return this.send('POST', '/v1/tasks/poll', body, signal);
  }

  /** Renews leases; answers which are still held and which were lost. */
  heartbeat(worker: string, tasks: HeldTask[]): Promise<{ held: string[]; lost: string[] }> {
    return this.send('POST', '/v1/tasks/heartbeat', { worker, tasks });
  }

  /** Reports outcomes; with `next`, the server may hand back new tasks for the worker's free slots. */
  report(
    worker: string,
    reports: Report[],
    next?: NextTasks,
  ): Promise<{ results: ReportResult[]; tasks: LeasedTask[] }> {
    return this.send('POST', '/v1/tasks/report', {
      worker,
      reports,
      ...(next && next.max > 0 ? { next: { task_types: next.taskTypes, max: next.max } } : {}),
    });
  }

  /** Leases tasks named by queue messages (Redis): only those still queued at that attempt. */
  leaseById(worker: string, taskTypes: readonly string[], tasks: QueuedTask[]): Promise<Leased> {
    return this.send('POST', '/v1/tasks/lease', { worker, task_types: taskTypes, tasks });
  }

  /**
   * Appends log lines to the attempt `holder` holds (at most 500 a request). A stale attempt is refused
   * with a `WeftApiError` of code `lease_lost` (409): nothing was kept.
   */
  writeLogs(
    holder: TaskLogHolder,
    lines: readonly TaskLogWrite[],
  ): Promise<{ kept: number; dropped: number; truncated: boolean }> {
    return this.send('POST', `/v1/tasks/${encodeURIComponent(holder.task_id)}/logs`, {
      run_id: holder.run_id,
      attempt: holder.attempt,
      lease_token: holder.lease_token,
      lines,
    });
  }
}
