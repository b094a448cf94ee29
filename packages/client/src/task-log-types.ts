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
