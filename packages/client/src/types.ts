/** JSON as the API sends and takes it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Run statuses. */
export type RunStatus =
  | 'running'
  | 'paused'
  | 'compensating'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'terminated';

/** A run. */
export interface Run {
  id: string;
  namespace: string;
  definition: string;
  version: number;
  status: RunStatus;
  input: Json;
  output: Json | null;
  /** Why it failed or stopped; `compensation` says what the compensations of a failed run did. */
  error: {
    message: string;
    node?: string;
    reason: string;
    compensation?: {
      status: 'completed' | 'failed';
      compensated: string[];
      failed?: string;
      pending?: string[];
    };
  } | null;
  created_at: string;
  finished_at: string | null;
  /**
   * Its steps (worker tasks, http calls, human tasks; each once, whatever its attempts) known so far,
   * completed, failed for good, and running.
   */
  progress: RunProgressCounts;
  /** Search attributes, in reads of runs (`getRun`, `listRuns`). */
  attributes?: Record<string, string | number | boolean>;
  /** The attempt that started this run, for runs started by `sub_workflow` or `start_workflow` nodes. */
  parent?: { run_id: string; node_id: string; iteration: string; attempt: number; detached: boolean } | null;
}

/** A run's steps known so far, completed, failed for good, and running. */
export interface RunProgressCounts {
  known: number;
  completed: number;
  failed: number;
  running: number;
}
/**
 * A run as a list gives it: a summary, with `input` and `output` only when the list asked for them
 * (`include`).
 */
export type RunSummary = Omit<Run, 'input' | 'output'> & Partial<Pick<Run, 'input' | 'output'>>;

/** One attempt of one node of a run. */
export interface Task {
  id: string;
  node_id: string;
  iteration: string;
  attempt: number;
  status: string;
  task_type: string | null;
  input: Json | null;
  output: Json | null;
  error: { message: string; reason: string; retryable: boolean; stack?: string } | null;
  worker: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  lease_expires_at: string | null;
  deadline_at: string | null;
  /** The run a `sub_workflow` or `start_workflow` attempt started. */
  child_run_id?: string | null;
}

/** A run with all its task attempts. */
export interface RunWithTasks extends Run {
  tasks: Task[];
  /** Set when retention deleted the run and it was read back from its archive document. */
  archived?: boolean;
  archived_at?: string;
  /** The run's history, in an archived run (a live run's is at `/v1/runs/{id}/history`). */
  history?: HistoryEvent[];
}

/** One event in a run's history. */
export interface HistoryEvent {
  seq: number;
  type: string;
  node_id: string | null;
  iteration: string | null;
  attempt: number | null;
  data: Json;
  at: string;
}

/** A task leased to a worker. */
export interface LeasedTask {
  task_id: string;
  run_id: string;
  node_id: string;
  iteration: string;
  attempt: number;
  task_type: string;
  definition: string;
  input: Json | null;
  lease_token: string;
  lease_expires_at: string;
  deadline_at: string | null;
  /** The same for every attempt of this node instance (run, node, iteration): the key to give a payment provider. */
  idempotency_key: string;
  /** What the server's step-context hook built for the handler (absent without one). */
  context?: Json;
  /** The W3C trace context to open the handler's span under (absent when the run has none). */
  traceparent?: string;
}

/** A worker's report on one leased task: an output, or an error. */
export type Report = ReportBase &
  (
    | { output: Json }
    | { error: { message: string; retryable?: boolean; type?: string; stack?: string; details?: Json } }
  );

/** Fields of every report: which attempt, and the lease token that proves the worker holds it. */
export interface ReportBase {
  run_id: string;
  task_id: string;
  attempt: number;
  lease_token: string;
  /** The node and iteration from the lease, sent back so the server can read ahead (never trusted). */
  node_id?: string;
  iteration?: string;
}

/** What became of one report. */
export interface ReportResult {
  task_id: string;
  accepted: boolean;
  why?: string;
}

/** A deployed definition version. */
export interface Deployed {
  name: string;
  version: number;
  created: boolean;
  hash: string;
  created_at: string;
}

/** Who asks for an operator action and why (kept in the run's history). */
export interface Asking {
  by?: string;
  reason?: string;
}

/** Which runs a bulk action applies to. */
export interface BulkFilter {
  definition?: string;
  version?: number;
  status?: RunStatus;
  /** ISO times. */
  started_before?: string;
  started_after?: string;
  /** A run id, or its first characters. */
  run_id?: string;
  idempotency_key?: string;
}

/** What one batch of a bulk action did; `next_cursor` continues with the next batch. */
export interface BulkAnswer {
  action: 'cancel' | 'terminate' | 'retry';
  dry_run: boolean;
  matched: number;
  done: number;
  refused: number;
  done_ids: string[];
  refusals: { run_id: string; code: string; message: string }[];
  next_cursor: string | null;
}

/** What became of a signal sent to a run. */
export interface SignalResult {
  signal_id: string;
  /** `delivered` to a waiting node, `kept` until a node waits for it, `queued` while the run is paused. */
  outcome: 'delivered' | 'kept' | 'queued';
  node_id?: string;
  iteration?: string;
}

/** What an event sent with `emit` started. */
export interface EmitResult {
  event: { id: string; name: string };
  /** A run per matching definition; `created: false` when an earlier event with the same id started it. */
  runs: { definition: string; version: number; run_id: string; status: RunStatus; created: boolean }[];
  /** Definitions whose trigger matched but could not start (a mapping failed, the input was refused). */
  failures: { definition: string; version: number; error: { code: string; message: string } }[];
}

/** An outbox message the relay gave up on: kept until replayed. */
export interface DeadLetter {
  id: string;
  destination: string;
  kind: string;
  message_id: string;
  run_id: string;
  task_id: string | null;
  attempts: number;
  last_error: string | null;
  created_at: string;
  dead_at: string | null;
  payload: Json;
}

/** Where the server publishes tasks: its queue table (poll the server) or Redis streams. */
export type DispatchInfo = { dispatcher: 'table' } | { dispatcher: 'redis'; stream_prefix: string };
