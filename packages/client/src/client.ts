import { Agent, request } from 'undici';
import type {
  Deployed,
  HistoryEvent,
  Json,
  LeasedTask,
  Report,
  ReportResult,
  Run,
  RunStatus,
  RunWithTasks,
} from './types.js';

/** An error answer from the API: its HTTP status, stable code and message. */
export class WeftApiError extends Error {
  override readonly name = 'WeftApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** How to reach a Weft server. */
export interface ClientOptions {
  /** Base URL, such as http://127.0.0.1:8080. */
  readonly url: string;
  /** Namespace for every request (default `default`). */
  readonly namespace?: string;
  /** Connections kept open to the server. */
  readonly connections?: number;
}

/** A typed client for Weft's HTTP API. Keeps connections alive; one client can be shared. */
export class WeftClient {
  readonly url: string;
  private readonly agent: Agent;
  private readonly headers: Record<string, string>;

  constructor(options: ClientOptions) {
    this.url = options.url.replace(/\/+$/, '');
    this.agent = new Agent({
      connections: options.connections ?? 16,
      keepAliveTimeout: 60_000,
      pipelining: 1,
    });
    this.headers = { 'content-type': 'application/json', 'x-weft-namespace': options.namespace ?? 'default' };
  }

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

  startRun(definition: string, input: Json = {}, options: { version?: number } = {}): Promise<Run> {
    return this.call('POST', '/v1/runs', {
      definition,
      input,
      ...(options.version ? { version: options.version } : {}),
    });
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

  listRuns(
    filter: { status?: RunStatus; definition?: string; cursor?: string; limit?: number } = {},
  ): Promise<{ items: Run[]; next_cursor: string | null }> {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(filter)) if (v !== undefined) q.set(k, String(v));
    const qs = q.toString();
    return this.call('GET', `/v1/runs${qs ? `?${qs}` : ''}`);
  }

  cancelRun(id: string, reason?: string, by?: string): Promise<Run> {
    return this.call('POST', `/v1/runs/${encodeURIComponent(id)}/cancel`, {
      ...(reason ? { reason } : {}),
      ...(by ? { by } : {}),
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
  ): Promise<{ tasks: LeasedTask[]; lease_ms: number; heartbeat_ms: number }> {
    return this.call(
      'POST',
      '/v1/tasks/poll',
      { worker, task_types: taskTypes, max, wait_ms: waitMs },
      'application/json',
      signal,
    );
  }

  heartbeat(
    worker: string,
    tasks: { run_id: string; task_id: string; attempt: number; lease_token: string }[],
  ): Promise<{ held: string[]; lost: string[] }> {
    return this.call('POST', '/v1/tasks/heartbeat', { worker, tasks });
  }

  /** Reports outcomes; with `next`, the server may hand back new tasks for the worker's free slots. */
  report(
    worker: string,
    reports: Report[],
    next?: { taskTypes: readonly string[]; max: number },
  ): Promise<{ results: ReportResult[]; tasks: LeasedTask[] }> {
    return this.call('POST', '/v1/tasks/report', {
      worker,
      reports,
      ...(next && next.max > 0 ? { next: { task_types: next.taskTypes, max: next.max } } : {}),
    });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private async call<T>(
    method: string,
    path: string,
    body?: unknown,
    type = 'application/json',
    signal?: AbortSignal,
  ): Promise<T> {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(`${this.url}${path}`, {
        method: method as 'GET',
        dispatcher: this.agent,
        headers:
          payload === undefined
            ? { 'x-weft-namespace': this.headers['x-weft-namespace']! }
            : { ...this.headers, 'content-type': type },
        ...(payload !== undefined ? { body: payload } : {}),
        ...(signal ? { signal } : {}),
        headersTimeout: 120_000,
        bodyTimeout: 120_000,
      });
    } catch (e) {
      const cause = (e as { code?: string }).code ?? (e as Error).message;
      throw new WeftApiError(
        0,
        'unreachable',
        `cannot reach the Weft server at ${this.url} (${cause}); is it running?`,
      );
    }
    const text = await response.body.text();
    const parsed = text ? (JSON.parse(text) as unknown) : null;
    if (response.statusCode >= 400) {
      const err = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | null)
        ?.error;
      throw new WeftApiError(
        response.statusCode,
        err?.code ?? 'http_error',
        err?.message ?? `HTTP ${response.statusCode}`,
        err?.details,
      );
    }
    return parsed as T;
  }
}
