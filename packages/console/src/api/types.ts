/** The API's JSON shapes, as the console reads them (snake_case, as sent). */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export const RUN_STATUSES = [
  'running',
  'paused',
  'compensating',
  'completed',
  'failed',
  'cancelled',
  'terminated',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export type TaskStatus =
  | 'waiting'
  | 'queued'
  | 'running'
  | 'completed'
  | 'failed'
  | 'timed_out'
  | 'cancelled'
  | 'skipped';

export interface Run {
  id: string;
  namespace: string;
  definition: string;
  version: number;
  status: RunStatus;
  input: Json;
  output: Json;
  error: Json;
  created_at: string;
  finished_at: string | null;
  parent: { run_id: string; node_id: string; iteration: string; attempt: number; detached: boolean } | null;
  /** Search attributes (in reads of runs). */
  attributes?: Record<string, string | number | boolean>;
}

/** A run as `GET /v1/runs` lists it: without its input and output. */
export type RunSummary = Omit<Run, 'input' | 'output'>;

export interface Task {
  id: string;
  node_id: string;
  iteration: string;
  attempt: number;
  status: TaskStatus;
  task_type: string | null;
  input: Json;
  output: Json;
  error: Json;
  worker: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  lease_expires_at: string | null;
  deadline_at: string | null;
  child_run_id: string | null;
}

export type RunWithTasks = Run & { tasks: Task[] };

export interface HistoryEvent {
  seq: number;
  type: string;
  node_id: string | null;
  iteration: string | null;
  attempt: number | null;
  data: Json;
  at: string;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface DefinitionSummary {
  name: string;
  latest_version: number;
  versions: number;
  updated_at: string;
}

export interface DefinitionVersion {
  name: string;
  version: number;
  hash: string;
  created_at: string;
  source: string;
  definition: GraphDefinition;
}

/** The normalised graph of a definition (camelCase: it is the engine's own form). */
export interface GraphDefinition {
  name: string;
  description?: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export interface GraphNode {
  id: string;
  kind: string;
  line: number;
  taskType?: string;
  event?: string;
  body?: { nodes: GraphNode[]; edges: GraphEdge[] };
  [field: string]: unknown;
}

export interface GraphEdge {
  from: string;
  to: string;
  line: number;
  when?: { kind: 'case'; values: Json[] } | { kind: 'default' } | { kind: 'timeout' };
}

export interface DefinitionProblem {
  line: number;
  node?: string;
  path: string;
  message: string;
}

export interface HumanTask {
  task_id: string;
  run_id: string;
  definition: string;
  node_id: string;
  iteration: string;
  attempt: number;
  title: string;
  description: string | null;
  assignees: string[];
  form: Json;
  input: Json;
  state: 'open' | 'completed' | 'expired' | 'cancelled';
  claimed_by: string | null;
  claimed_at: string | null;
  deadline_at: string | null;
  completed_by: string | null;
  completed_at: string | null;
  data: Json;
  created_at: string;
}

export interface DeadLetter {
  id: string;
  destination: string;
  kind: string;
  message_id: string;
  run_id: string | null;
  task_id: string | null;
  attempts: number;
  last_error: string | null;
  created_at: string;
  dead_at: string | null;
  payload: Json;
}

export interface OutboxBacklog {
  destination: string;
  pending: number;
  retrying: number;
  dead: number;
  oldest_at: string | null;
  next_attempt_at: string | null;
  last_error: string | null;
}

export interface Schedule {
  name: string;
  definition: string;
  version: number | null;
  cron: string;
  timezone: string;
  input: Json;
  overlap: string;
  paused: boolean;
  next_at: string | null;
  upcoming: string[];
  last_at: string | null;
  last_run_id: string | null;
  last_outcome: string | null;
}

export interface Limit {
  kind: string;
  name: string;
  max: number;
  per_ms: number | null;
  used: number;
  updated_at: string | null;
}

export interface Worker {
  name: string;
  task_types: string[];
  first_seen_at: string;
  last_seen_at: string;
}
