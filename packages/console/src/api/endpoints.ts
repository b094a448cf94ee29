import { get, post, request } from './http.js';
import type {
  DeadLetter,
  DefinitionProblem,
  DefinitionSummary,
  DefinitionVersion,
  HistoryEvent,
  HumanTask,
  Json,
  Limit,
  OutboxBacklog,
  Page,
  Run,
  RunSummary,
  RunWithTasks,
  Schedule,
  Worker,
} from './types.js';

/** The filters of the runs table, as `GET /v1/runs` takes them. */
export interface RunFilters {
  definition?: string;
  version?: string;
  status?: string;
  started_after?: string;
  started_before?: string;
  run_id?: string;
  idempotency_key?: string;
  /** A search attribute, `name:value`. */
  attr?: string;
}

const enc = encodeURIComponent;

/** Every call the console makes: the public HTTP API, nothing else. */
export const api = {
  namespaces: () => get<{ items: string[] }>('/v1/namespaces'),
  runs: (filters: RunFilters, cursor?: string, limit = 50) =>
    get<Page<RunSummary>>('/v1/runs', { ...filters, cursor, limit }),
  countRuns: (filters: RunFilters) =>
    get<{ count: number; capped: boolean }>('/v1/runs/count', { ...filters }),
  bulk: (body: {
    action: 'cancel' | 'terminate' | 'retry';
    filter: Record<string, string | number>;
    reason?: string;
    by?: string;
    cursor?: string;
    dry_run?: boolean;
    batch_size?: number;
  }) =>
    post<{ matched: number; done: number; refused: number; next_cursor: string | null }>(
      '/v1/runs/bulk',
      body,
    ),
  run: (id: string) => get<RunWithTasks>(`/v1/runs/${enc(id)}`),
  startRun: (definition: string, input: Json, version?: number) =>
    post<Run>('/v1/runs', { definition, input, ...(version ? { version } : {}) }),
  history: (id: string, after = 0) =>
    get<{ events: HistoryEvent[]; next_after: number | null }>(`/v1/runs/${enc(id)}/history`, {
      after,
      limit: 1000,
    }),
  runAction: (id: string, action: string, body: Record<string, unknown>) =>
    post<Run>(`/v1/runs/${enc(id)}/${action}`, body),
  nodeAction: (id: string, node: string, action: string, body: Record<string, unknown>) =>
    post<Run>(`/v1/runs/${enc(id)}/nodes/${enc(node)}/${action}`, body),
  signal: (id: string, body: { name: string; data: Json; correlation?: string }) =>
    post<{ signal_id: string; outcome: string; node_id: string | null }>(`/v1/runs/${enc(id)}/signals`, body),
  definitions: () => get<{ items: DefinitionSummary[] }>('/v1/definitions'),
  definitionVersions: (name: string) =>
    get<{ name: string; versions: { version: number; hash: string; created_at: string }[] }>(
      `/v1/definitions/${enc(name)}`,
    ),
  definitionVersion: (name: string, version: number | 'latest') =>
    get<DefinitionVersion>(`/v1/definitions/${enc(name)}/versions/${version}`),
  deploy: (yaml: string) =>
    request<{ name: string; version: number; created: boolean }>('POST', '/v1/definitions', { yaml }),
  validate: (yaml: string) =>
    request<{ valid: boolean; problems: DefinitionProblem[] }>('POST', '/v1/definitions/validate', { yaml }),
  inbox: (state: string, assignee?: string) =>
    get<{ items: HumanTask[] }>('/v1/inbox', { state, assignee, limit: 200 }),
  humanTask: (id: string) => get<HumanTask>(`/v1/inbox/${enc(id)}`),
  claim: (id: string, user: string) => post<HumanTask>(`/v1/inbox/${enc(id)}/claim`, { user }),
  release: (id: string, user: string) => post<HumanTask>(`/v1/inbox/${enc(id)}/release`, { user }),
  complete: (id: string, user: string, data: Json) =>
    post<HumanTask>(`/v1/inbox/${enc(id)}/complete`, { user, data }),
  deadLetters: (destination?: string, cursor?: string) =>
    get<Page<DeadLetter>>('/v1/dead-letters', { destination, cursor, limit: 50 }),
  replay: (body: { ids?: string[]; destination?: string }) =>
    post<{ replayed: number }>('/v1/dead-letters/replay', body),
  outbox: () => get<{ items: OutboxBacklog[] }>('/v1/outbox'),
  schedules: () => get<{ items: Schedule[] }>('/v1/schedules'),
  scheduleAction: (name: string, action: 'pause' | 'resume') =>
    post<Schedule>(`/v1/schedules/${enc(name)}/${action}`),
  limits: () => get<{ items: Limit[] }>('/v1/limits'),
  workers: () => get<{ items: Worker[]; seen_within_ms: number }>('/v1/workers'),
};
