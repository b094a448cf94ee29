import type { Json } from './types.js';

/** A limit of a namespace and how much of it is in use. */
export interface Limit {
  kind: 'concurrency' | 'semaphore' | 'rate' | 'quota';
  name: string;
  max: number;
  per_ms: number | null;
  used: number;
  updated_at: string | null;
}

/** A task for a person. */
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
  form: Json | null;
  input: Json | null;
  state: 'open' | 'completed' | 'expired' | 'cancelled';
  claimed_by: string | null;
  claimed_at: string | null;
  deadline_at: string | null;
  completed_by: string | null;
  completed_at: string | null;
  data: Json | null;
  created_at: string;
}

/** A schedule. */
export interface Schedule {
  name: string;
  definition: string;
  version: number | null;
  cron: string;
  timezone: string;
  input: Json;
  overlap: 'skip' | 'allow' | 'buffer_one';
  paused: boolean;
  next_at: string | null;
  /** The next fire times (up to five; none while paused). */
  upcoming: string[];
  buffered_at: string | null;
  last_at: string | null;
  last_run_id: string | null;
  last_outcome: string | null;
  created_at: string;
  updated_at: string;
}

/** What a schedule is made of. */
export interface ScheduleSpec {
  definition: string;
  cron: string;
  version?: number;
  timezone?: string;
  input?: Json;
  overlap?: 'skip' | 'allow' | 'buffer_one';
  paused?: boolean;
}

/** The stuck-run sweeper's figures. */
export interface SweeperStats {
  rounds: number;
  repaired: number;
  recent: string[];
  /** Repairs checked by a later round since the server started: the run had moved, or had not. */
  checked_moved: number;
  checked_stuck: number;
  last_round_at: string | null;
  idle_ms: number;
}

/** A repair by the stuck-run sweeper, as its audit keeps it (`GET /v1/sweeper/repairs`). */
export interface SweeperRepair {
  id: string;
  run_id: string;
  definition: string;
  repaired_at: string;
  /** What was wrong: the run's status, how long it had been idle, and its last event before the repair. */
  found: {
    status: string;
    idle_ms: number;
    last_event: { seq: number; type: string; node_id: string | null; at: string } | null;
  };
  /** What the repair changed: history it wrote, attempts it started or changed, timers, the run's new status. */
  changed: {
    events: string[];
    tasks: { node: string; iteration: string; attempt: number }[];
    task_updates: number;
    timers: number;
    status: string | null;
  };
  /** Whether the run moved after the repair, as a later round found it; null until checked. */
  moved: boolean | null;
  checked_at: string | null;
}
