import type { Json } from '../json.js';

/**
 * Options of code-first nodes, written the way the YAML format writes them (durations as text such as
 * `30s`, or milliseconds as a number; mappings as JSONata expressions in strings).
 */

/** A duration: `250ms`, `30s`, `5m`, `1h30m`, `2d`, or a number of milliseconds. */
export type Duration = string | number;

/** A mapping: every string is a JSONata expression (`input.amount`, `nodes.charge.output.id`). */
export type Mapping = Json;

/** When and how often a failed attempt is tried again. */
export interface RetryOptions {
  /** Attempts in all, the first included: 1 means never retry. */
  readonly maxAttempts?: number;
  readonly backoff?: 'fixed' | 'exponential';
  /** Wait before the second attempt. */
  readonly delay?: Duration;
  /** Cap on the wait between attempts. */
  readonly maxDelay?: Duration;
  /** Growth per attempt for exponential backoff. */
  readonly factor?: number;
}

/** An incoming edge: from a node id, optionally taken only for a switch case, as default, or on timeout. */
export type After =
  | string
  | { readonly from: string; readonly case: Json | readonly Json[] }
  | { readonly from: string; readonly default: true }
  | { readonly from: string; readonly on: 'timeout' };

/** Options every node takes. */
export interface NodeOptions {
  /** The nodes this one runs after (its incoming edges). */
  readonly after?: readonly After[];
  /** With several incoming edges: wait for all of them (default) or the first. */
  readonly join?: 'all' | 'any';
  readonly description?: string;
}

/** Writes a duration as YAML does. */
export function durationText(d: Duration): string {
  return typeof d === 'number' ? `${d}ms` : d;
}

/** A retry policy as YAML fields (snake_case), leaving out what is not given. */
export function retryFields(r: RetryOptions): { [key: string]: Json } {
  const out: { [key: string]: Json } = {};
  if (r.maxAttempts !== undefined) out.max_attempts = r.maxAttempts;
  if (r.backoff !== undefined) out.backoff = r.backoff;
  if (r.delay !== undefined) out.delay = durationText(r.delay);
  if (r.maxDelay !== undefined) out.max_delay = durationText(r.maxDelay);
  if (r.factor !== undefined) out.factor = r.factor;
  return out;
}
