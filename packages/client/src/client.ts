import { FlowClient } from './flow-client.js';
import type { SweeperRepair, SweeperStats } from './flow-types.js';
import type { OutboxBacklog, RunListFilter, Validation, WorkerSeen } from './operator-types.js';
import type { HeldTask, Leased, NextTasks, QueuedTask } from './task-calls.js';
import type {
  Asking,
  BulkAnswer,
  BulkFilter,
  DeadLetter,
  Deployed,
  DispatchInfo,
  EmitResult,
  HistoryEvent,
  Json,
  LeasedTask,
  Report,
  ReportResult,
  Run,
  RunStatus,
  RunSummary,
  RunWithTasks,
  SignalResult,
} from './types.js';

import { outputOf, type WaitOptions, waitForRun } from './waiting.js';

/** A typed client for Weft's HTTP API. Keeps connections alive; one client can be shared. */
export class WeftClient extends FlowClient {
  /** Deploys YAML; the same content returns the existing version. */
  deploy(yaml: string): Promise<Deployed> {
    return this.call('POST', '/v1/definitions', yaml, 'application/yaml');
  }

  listDefinitions(): Promise<{
    items: { name: string; latest_version: number; versions: number; updated_at: string }[];
  }> {
    return this.call('GET', '/v1/definitions');
  }

  getDefinition(
    name: string,
  ): Promise<{ name: string; versions: { version: number; hash: string; created_at: string }[] }> {
    return this.call('GET', `/v1/definitions/${encodeURIComponent(name)}`);
  }

  getDefinitionVersion(
    name: string,
    version: number | 'latest' = 'latest',
  ): Promise<{ name: string; version: number; source: string; definition: Json }> {
    return this.call('GET', `/v1/definitions/${encodeURIComponent(name)}/versions/${version}`);
  }

  /**
   * Starts a run. With `idempotencyKey`, a repeated start returns the run the key started (`created`
   * false), or fails with `duplicate_start` when `onDuplicate` is `error`.
   */
  startRun(
    definition: string,
    input: Json = {},
    options: {
      version?: number;
      idempotencyKey?: string;
      onDuplicate?: 'return' | 'error';
      /** Search attributes: names to text, numbers or booleans, that lists filter on (`attr`). */
      attributes?: Record<string, string | number | boolean>;
    } = {},
  ): Promise<Run & { created: boolean }> {
    return this.call('POST', '/v1/runs', {
      definition,
      input,
      ...(options.version ? { version: options.version } : {}),
      ...(options.idempotencyKey ? { idempotency_key: options.idempotencyKey } : {}),
      ...(options.onDuplicate ? { on_duplicate: options.onDuplicate } : {}),
      ...(options.attributes ? { attributes: options.attributes } : {}),
    });
  }

  /**
   * Starts a run and waits for it to finish: its output, or `RunFailedError` (carrying the run's error),
   * `RunCancelledError` or `RunWaitTimeoutError` (see `result`).
   */
  async startAndWait(
    definition: string,
    input: Json = {},
    options: Parameters<WeftClient['startRun']>[2] & WaitOptions = {},
  ): Promise<{ run: Run; output: Json }> {
    const started = await this.startRun(definition, input, options);
    const run = await waitForRun(this, started.id, options);
    return { run, output: outputOf(run) };
  }

  /** Waits for a run to finish and returns its output; throws as `startAndWait` does. */
  async result(runId: string, options: WaitOptions = {}): Promise<Json> {
    return outputOf(await waitForRun(this, runId, options));
  }

  /** The stuck-run sweeper's figures on this server. */
  sweeper(): Promise<SweeperStats> {
    return this.call('GET', '/v1/sweeper');
  }

  /** The sweeper's repairs in this namespace, newest first (`before`: the previous page's `next_before`). */
  sweeperRepairs(
    filter: { run_id?: string; moved?: boolean; before?: string; limit?: number } = {},
  ): Promise<{ items: SweeperRepair[]; next_before: string | null }> {
    return this.call('GET', `/v1/sweeper/repairs${query(filter)}`);
  }

  /** Runs a sweeper round now; `idleMs` overrides the idle threshold. */
  sweep(idleMs?: number): Promise<{ repaired: string[] }> {
    return this.call('POST', '/v1/sweeper/run', idleMs === undefined ? {} : { idle_ms: idleMs });
  }

  /** Starts many runs of one definition in one request (up to 1,000); each item is a run or an error. */
  startRuns(
    definition: string,
    inputs: Json[],
    options: { version?: number } = {},
  ): Promise<{ items: (Run | { error: { code: string; message: string } })[] }> {
    return this.call('POST', '/v1/runs/batch', {
      definition,
      inputs,
      ...(options.version ? { version: options.version } : {}),
    });
  }

  getRun(id: string): Promise<RunWithTasks> {
    return this.call('GET', `/v1/runs/${encodeURIComponent(id)}`);
  }

  /** A page of runs, newest first, as summaries; `include` adds their input and output. */
  listRuns(
    filter: RunListFilter & {
      status?: RunStatus;
      cursor?: string;
      limit?: number;
      include?: ('input' | 'output')[];
    } = {},
  ): Promise<{ items: RunSummary[]; next_cursor: string | null }> {
    return this.call('GET', `/v1/runs${query(filter)}`);
  }

  /** How many runs match (up to 100,000; `capped` says the count stopped there). */
  countRuns(filter: RunListFilter = {}): Promise<{ count: number; capped: boolean }> {
    return this.call('GET', `/v1/runs/count${query(filter)}`);
  }

  /** Namespaces with something deployed. */
  listNamespaces(): Promise<{ items: string[] }> {
    return this.call('GET', '/v1/namespaces');
  }

  /** Workers seen asking for tasks within `withinMs` (10 minutes by default). */
  listWorkers(withinMs?: number): Promise<{ items: WorkerSeen[]; seen_within_ms: number }> {
    return this.call('GET', `/v1/workers${query({ within_ms: withinMs })}`);
  }

  /** The outbox backlog per destination. */
  outboxBacklog(): Promise<{ items: OutboxBacklog[] }> {
    return this.call('GET', '/v1/outbox');
  }

  /** Checks a definition's YAML without deploying it. */
  validate(yaml: string): Promise<Validation> {
    return this.call('POST', '/v1/definitions/validate', yaml, 'application/yaml');
  }

  cancelRun(id: string, reason?: string, by?: string): Promise<Run> {
    return this.call('POST', `/v1/runs/${encodeURIComponent(id)}/cancel`, {
      ...(reason ? { reason } : {}),
      ...(by ? { by } : {}),
    });
  }

  /** Pauses a running run: nothing new starts; tasks already leased may finish. */
  pauseRun(id: string, asking: Asking = {}): Promise<Run> {
    return this.call('POST', `/v1/runs/${encodeURIComponent(id)}/pause`, asking);
  }

  /** Resumes a paused run. */
  resumeRun(id: string, asking: Asking = {}): Promise<Run> {
    return this.call('POST', `/v1/runs/${encodeURIComponent(id)}/resume`, asking);
  }

  /** Terminates a running or paused run; the reason is required. */
  terminateRun(id: string, reason: string, by?: string): Promise<Run> {
    return this.call('POST', `/v1/runs/${encodeURIComponent(id)}/terminate`, {
      reason,
      ...(by ? { by } : {}),
    });
  }

  /** Runs the failed nodes of a failed, cancelled or terminated run again. */
  retryRun(id: string, asking: Asking = {}): Promise<Run> {
    return this.call('POST', `/v1/runs/${encodeURIComponent(id)}/retry`, asking);
  }

  /** Runs `node` and everything downstream of it again, in a finished run. */
  rerunRun(id: string, node: string, asking: Asking & { iteration?: string } = {}): Promise<Run> {
    return this.call('POST', `/v1/runs/${encodeURIComponent(id)}/rerun`, { node, ...asking });
  }

  /** Skips a task of a running or paused run, with an optional output, and continues. */
  skipTask(
    id: string,
    node: string,
    options: Asking & { iteration?: string; output?: Json } = {},
  ): Promise<Run> {
    return this.call(
      'POST',
      `/v1/runs/${encodeURIComponent(id)}/nodes/${encodeURIComponent(node)}/skip`,
      options,
    );
  }

  /** Completes a task by hand with the given output. */
  completeTask(
    id: string,
    node: string,
    output: Json,
    options: Asking & { iteration?: string } = {},
  ): Promise<Run> {
    return this.call(
      'POST',
      `/v1/runs/${encodeURIComponent(id)}/nodes/${encodeURIComponent(node)}/complete`,
      {
        output,
        ...options,
      },
    );
  }

  /** Fails a task by hand with the given error (not retried unless `retryable`). */
  failTask(
    id: string,
    node: string,
    error: { message: string; retryable?: boolean; details?: Json },
    options: Asking & { iteration?: string } = {},
  ): Promise<Run> {
    return this.call('POST', `/v1/runs/${encodeURIComponent(id)}/nodes/${encodeURIComponent(node)}/fail`, {
      error,
      ...options,
    });
  }

  /** One batch of a bulk cancel, terminate or retry; continue with `next_cursor` until it is null. */
  bulk(
    action: 'cancel' | 'terminate' | 'retry',
    filter: BulkFilter,
    options: Asking & { batch_size?: number; cursor?: string; dry_run?: boolean } = {},
  ): Promise<BulkAnswer> {
    return this.call('POST', '/v1/runs/bulk', { action, filter, ...options });
  }

  /**
   * A run's history, live: every event after `after`, then each new one as it happens, over
   * Server-Sent Events. A dropped connection is resumed from the last event received (Last-Event-ID),
   * so each event arrives once. Ends when `signal` aborts; throws on a 4xx answer (no such run).
   */
  streamHistory(
    id: string,
    options: { after?: number; signal?: AbortSignal } = {},
  ): AsyncGenerator<HistoryEvent> {
    return this.events<HistoryEvent>(`/v1/runs/${encodeURIComponent(id)}/events`, options);
  }

  /**
   * Sends a signal to a run: delivered to a node waiting for it, or kept until one does (`outcome`).
   * Refused (409) for a finished run; 422 when no node of the run's definition waits for `name`.
   */
  signal(
    id: string,
    name: string,
    data: Json = null,
    options: { correlation?: string; by?: string } = {},
  ): Promise<SignalResult> {
    return this.call('POST', `/v1/runs/${encodeURIComponent(id)}/signals`, {
      name,
      data,
      ...(options.correlation !== undefined ? { correlation: options.correlation } : {}),
      ...(options.by !== undefined ? { by: options.by } : {}),
    });
  }

  /**
   * Sends an event: starts the latest version of every definition whose triggers listen for `name`, at
   * most once per event `id` and definition (a repeat answers the same runs, `created: false`).
   */
  emit(name: string, data: Json = null, options: { id?: string } = {}): Promise<EmitResult> {
    return this.call('POST', '/v1/events', {
      name,
      data,
      ...(options.id !== undefined ? { id: options.id } : {}),
    });
  }

  history(
    id: string,
    after = 0,
    limit = 200,
  ): Promise<{ events: HistoryEvent[]; next_after: number | null }> {
    return this.call('GET', `/v1/runs/${encodeURIComponent(id)}/history?after=${after}&limit=${limit}`);
  }

  /** Leases up to `max` tasks, waiting up to `waitMs` for one to be ready. */
  poll(
    worker: string,
    taskTypes: readonly string[],
    max: number,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<Leased> {
    return this.taskCalls.poll(worker, taskTypes, max, waitMs, signal);
  }

  /** Renews leases; answers which are still held and which were lost. */
  heartbeat(worker: string, tasks: HeldTask[]): Promise<{ held: string[]; lost: string[] }> {
    return this.taskCalls.heartbeat(worker, tasks);
  }

  /** Reports outcomes; with `next`, the server may hand back new tasks for the worker's free slots. */
  report(
    worker: string,
    reports: Report[],
    next?: NextTasks,
  ): Promise<{ results: ReportResult[]; tasks: LeasedTask[] }> {
    return this.taskCalls.report(worker, reports, next);
  }

  /** Where the server publishes tasks (its queue table, or Redis streams). */
  dispatchInfo(signal?: AbortSignal): Promise<DispatchInfo> {
    return this.taskCalls.dispatchInfo(signal);
  }

  /** Leases tasks named by queue messages (Redis): only those still queued at that attempt. */
  leaseById(worker: string, taskTypes: readonly string[], tasks: QueuedTask[]): Promise<Leased> {
    return this.taskCalls.leaseById(worker, taskTypes, tasks);
  }

  /** Dead letters, newest first. */
  listDeadLetters(
    filter: { destination?: string; cursor?: string; limit?: number } = {},
  ): Promise<{ items: DeadLetter[]; next_cursor: string | null }> {
    return this.call('GET', `/v1/dead-letters${query(filter)}`);
  }

  /** Puts dead letters back for delivery: by id, every one of a destination, or all with neither. */
  replayDeadLetters(select: { ids?: string[]; destination?: string } = {}): Promise<{ replayed: number }> {
    return this.call('POST', '/v1/dead-letters/replay', select);
  }
}

/** `?a=1&b=2` from the defined fields, or nothing. */
function query(fields: object): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) q.set(k, String(v));
  const text = q.toString();
  return text ? `?${text}` : '';
}
