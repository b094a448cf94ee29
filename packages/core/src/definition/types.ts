import type { MappingSource } from '../expr/mapping.js';
import type { JsonObject } from '../json.js';
import type { DeclaredLimits } from './limit-types.js';
import type { EdgeDef, NodeDef, RetryPolicy } from './node-types.js';
import type { Trigger } from './trigger-types.js';

/** A workflow definition: the validated, normalised form of one YAML document. */
export interface Definition {
  readonly name: string;
  readonly description?: string;
  readonly nodes: readonly NodeDef[];
  readonly edges: readonly EdgeDef[];
  /** JSON Schema the run input must satisfy, checked at start. */
  readonly inputSchema: JsonObject | null;
  /** Mapping that computes the run's output; by default the outputs of the last nodes, keyed by id. */
  readonly output: MappingSource | null;
  /** Limits this definition declares for its namespace (set when it is deployed). */
  readonly limits?: DeclaredLimits;
  /** Where to announce the run's end (completed, failed, cancelled), through the outbox. */
  readonly onStatus?: StatusCallback | null;
  /** Events that start a run of this definition (its latest version), through `POST /v1/events`. */
  readonly triggers?: readonly Trigger[];
}

/** A run status a status callback can announce. */
export type CallbackStatus = 'completed' | 'failed' | 'cancelled' | 'terminated';

/** A definition's status callback: a webhook URL, or a sink configured on the server. */
export type StatusCallback =
  | { readonly kind: 'url'; readonly url: string; readonly statuses: readonly CallbackStatus[] }
  | { readonly kind: 'sink'; readonly sink: string; readonly statuses: readonly CallbackStatus[] };

/** The retry policy a task gets when it names none. */
export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 3,
  backoff: 'exponential',
  delayMs: 1000,
  maxDelayMs: 300_000,
  factor: 2,
};
