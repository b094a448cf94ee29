/** What operators read beside runs, as the API sends it. */

/** A worker seen asking for tasks. */
export interface WorkerSeen {
  name: string;
  task_types: string[];
  first_seen_at: string;
  last_seen_at: string;
}

/** The outbox of one destination. */
export interface OutboxBacklog {
  destination: string;
  /** Waiting for their first delivery. */
  pending: number;
  /** Failed at least once, to be tried again. */
  retrying: number;
  /** Dead letters. */
  dead: number;
  oldest_at: string | null;
  next_attempt_at: string | null;
  last_error: string | null;
}

/** A definition checked without deploying it. */
export interface Validation {
  valid: boolean;
  name?: string;
  problems: { line: number; node?: string; path: string; message: string }[];
}

/** The filters runs are listed and counted by (`GET /v1/runs`, `GET /v1/runs/count`). */
export interface RunListFilter {
  status?: string;
  definition?: string;
  version?: number;
  /** ISO times. */
  started_before?: string;
  started_after?: string;
  /** A run id, or its first characters. */
  run_id?: string;
  idempotency_key?: string;
  /** Only runs with this search attribute: `name:value` (`customer:42` matches 42 and "42"). */
  attr?: string;
}
