// What the benchmark and its embedded-path process (embedded-process.ts) say to each other over IPC.
import type { Timing } from './phases.js';

/** The engine's counters, as the server publishes them on /metrics. */
export interface EngineCounters {
  /** Events decided (weft_events_decided_total). */
  readonly events: number;
  /** Node instances read to decide them (weft_node_instances_read_total). */
  readonly reads: number;
  /** Statements sent to PostgreSQL (weft_db_statements_total). */
  readonly statements: number;
}

/** A request to the embedded-path process; each carries an id its reply repeats. */
export type EmbeddedRequest = { readonly id: number } & (
  | { readonly cmd: 'deploy'; readonly yaml: string }
  | { readonly cmd: 'burst'; readonly count: number }
  | { readonly cmd: 'paced'; readonly count: number; readonly rate: number }
  | { readonly cmd: 'settled' }
  | { readonly cmd: 'dump' }
  | { readonly cmd: 'counters' }
  | { readonly cmd: 'stop' }
);

/** A reply: what the request asked for, or the message of the error it met. */
export interface EmbeddedReply {
  readonly id: number;
  readonly error?: string;
  /** Runs started and when (burst, paced). */
  readonly sent?: [string, number][];
  /** When the last awaited result arrived (settled). */
  readonly at?: number;
  readonly timings?: Timing[];
  readonly counters?: EngineCounters;
}
