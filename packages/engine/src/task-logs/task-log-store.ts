import type { Json } from '@weft/core';

/** How bad a log line is. */
export type TaskLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** The levels, least severe first. */
export const TASK_LOG_LEVELS: readonly TaskLogLevel[] = ['debug', 'info', 'warn', 'error'];

/** One line a handler wrote, as it arrives from the worker. */
export interface TaskLogLine {
  readonly level: TaskLogLevel;
  readonly message: string;
  /** Structured values that go with the message (an order id, a count). */
  readonly fields?: Json;
  /** When the handler wrote it; the time it arrived when absent. */
  readonly at?: Date;
}

/** The attempt that writes, and the lease it holds: a log write is fenced like a report (invariant 13). */
export interface HeldAttempt {
  readonly runId: string;
  readonly taskId: string;
  readonly attempt: number;
  readonly leaseToken: string;
}

/** How much log an attempt may keep. */
export interface TaskLogLimits {
  /** Bytes of one line (its message and fields as JSON); a longer message is cut. */
  readonly lineBytes: number;
  /** Lines per attempt, the truncation marker aside. */
  readonly linesPerAttempt: number;
  /** Bytes per attempt. */
  readonly bytesPerAttempt: number;
}

/** The default bounds: 8 KiB a line, 1,000 lines and 1 MiB an attempt. */
export const DEFAULT_TASK_LOG_LIMITS: TaskLogLimits = {
  lineBytes: 8 * 1024,
  linesPerAttempt: 1000,
  bytesPerAttempt: 1024 * 1024,
};

/** What an attempt has kept so far. */
export interface TaskLogUsage {
  readonly lines: number;
  readonly bytes: number;
  /** True once the truncation marker was written: nothing more is kept. */
  readonly truncated: boolean;
}

/** What became of a write: how many lines were kept and dropped, and whether the log is now truncated. */
export interface TaskLogVerdict {
  readonly kept: number;
  readonly dropped: number;
  readonly truncated: boolean;
}

/** A kept line, as reads return it. */
export interface StoredTaskLogLine {
  /** Its place in the run's log: lines are listed in the order they were kept. */
  readonly id: string;
  readonly taskId: string;
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
  readonly at: Date;
  readonly level: TaskLogLevel;
  readonly message: string;
  readonly fields: Json | null;
}

/** Which lines of a run to read: filters and a page. */
export interface TaskLogQuery {
  readonly runId: string;
  readonly nodeId?: string;
  readonly attempt?: number;
  /** Lines after this id (exclusive). */
  readonly after?: string;
  readonly limit: number;
}

/**
 * Where task log lines are kept, with the run they belong to (deleting the run deletes them). A write is
 * fenced by the lease: it is kept only while the attempt is running under that token and attempt, and
 * within the attempt's bounds.
 */
export interface TaskLogStore {
  /**
   * Appends lines to a held attempt of a run in `namespace` (null: any namespace); null when the attempt
   * does not hold that lease (stale token or attempt, finished, past its deadline, another namespace).
   */
  append(
    namespace: string | null,
    held: HeldAttempt,
    lines: readonly TaskLogLine[],
    limits: TaskLogLimits,
  ): Promise<TaskLogVerdict | null>;
  /** A page of a run's lines in the order they were kept. */
  list(query: TaskLogQuery): Promise<StoredTaskLogLine[]>;
}
