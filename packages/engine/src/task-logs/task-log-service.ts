import { WeftError } from '@weft/core';
import { namespaceScope } from '../store/namespaces.js';
import {
  DEFAULT_TASK_LOG_LIMITS,
  type HeldAttempt,
  type StoredTaskLogLine,
  type TaskLogLimits,
  type TaskLogLine,
  type TaskLogQuery,
  type TaskLogStore,
  type TaskLogVerdict,
} from './task-log-store.js';

/** Lines one write may carry: a worker sends what it buffered, in several writes when there is more. */
export const MAX_LINES_PER_WRITE = 500;

/** Lines one page of a read may hold. */
export const MAX_LOG_PAGE = 1000;

/** The store used when none is given: task logs are kept only where runs are kept in PostgreSQL. */
export class UnavailableTaskLogStore implements TaskLogStore {
  private fail(): never {
    throw new WeftError(
      'logs_unavailable',
      'this engine keeps no task logs: they are kept by the PostgreSQL store (give the engine a PgTaskLogStore)',
      501,
    );
  }

  async append(): Promise<TaskLogVerdict | null> {
    this.fail();
  }

  async list(): Promise<StoredTaskLogLine[]> {
    this.fail();
  }
}

/**
 * Task logs: lines a handler writes to its attempt (`ctx.log` in the worker SDK), fenced by the lease like
 * a report, bounded per attempt, read per run.
 */
export class TaskLogService {
  constructor(
    private readonly store: TaskLogStore,
    readonly limits: TaskLogLimits = DEFAULT_TASK_LOG_LIMITS,
  ) {}

  /**
   * Appends lines to the attempt the worker holds. Refused with `lease_lost` (409) when the attempt no
   * longer holds that lease: a stale attempt's lines are never kept (invariant 13).
   */
  async append(namespace: string, held: HeldAttempt, lines: readonly TaskLogLine[]): Promise<TaskLogVerdict> {
    if (lines.length > MAX_LINES_PER_WRITE)
      throw new WeftError('bad_request', `send at most ${MAX_LINES_PER_WRITE} lines a write`, 400);
    if (lines.length === 0) return { kept: 0, dropped: 0, truncated: false };
    const verdict = await this.store.append(namespaceScope(namespace) ?? null, held, lines, this.limits);
    if (verdict === null)
      throw new WeftError(
        'lease_lost',
        `attempt ${held.attempt} of task ${held.taskId} does not hold this lease any more (it finished, timed out, ` +
          'was cancelled or was leased again): its log lines were not kept; stop logging for it',
        409,
      );
    return verdict;
  }

  /** A page of a run's log lines, in the order they were kept. The caller checks the run's namespace. */
  async list(query: TaskLogQuery): Promise<{ lines: StoredTaskLogLine[]; nextAfter: string | null }> {
    if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_LOG_PAGE)
      throw new WeftError('bad_request', `limit must be a whole number from 1 to ${MAX_LOG_PAGE}`, 400);
    const lines = await this.store.list(query);
    return { lines, nextAfter: lines.length === query.limit ? (lines.at(-1)?.id ?? null) : null };
  }
}
