import type { RetryPolicy } from './node-types.js';
import { MAX_DURATION_MS } from './patterns.js';
import type { MapReader } from './reader.js';

/** Reads a `retry` field over a base policy (the definition's defaults, or a node kind's own). */
export function readRetry(parent: MapReader, base: RetryPolicy): RetryPolicy {
  const reader = parent.map('retry');
  if (!reader) return base;
  const maxAttempts = reader.integer('max_attempts', { min: 1, max: 1000 }) ?? base.maxAttempts;
  const backoff = reader.oneOf('backoff', ['fixed', 'exponential'] as const) ?? base.backoff;
  const delayMs = reader.duration('delay', { minMs: 0, maxMs: MAX_DURATION_MS }) ?? base.delayMs;
  const maxDelayMs =
    reader.duration('max_delay', { minMs: 0, maxMs: MAX_DURATION_MS }) ?? Math.max(base.maxDelayMs, delayMs);
  const factor = reader.number('factor', { min: 1 }) ?? base.factor;
  reader.done('a retry policy (expected max_attempts, backoff, delay, max_delay, factor)');
  if (maxDelayMs < delayMs)
    reader.problem(`max_delay must not be shorter than delay`, reader.lineOf('max_delay'));
  return { maxAttempts, backoff, delayMs, maxDelayMs, factor };
}
