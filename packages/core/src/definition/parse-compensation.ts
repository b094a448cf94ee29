import type { Compensation, RetryPolicy } from './node-types.js';
import { readRetry } from './parse-retry.js';
import { MAX_DURATION_MS, TASK_TYPE_PATTERN } from './patterns.js';
import type { MapReader } from './reader.js';

/** Reads a task node's `compensate` field, if it has one, over the definition's defaults. */
export function readCompensation(
  r: MapReader,
  defaults: { readonly retry: RetryPolicy; readonly timeoutMs: number | null },
): Compensation | undefined {
  if (!r.has('compensate')) return undefined;
  const reader = r.map('compensate');
  if (!reader) return undefined;
  const taskType = reader.string('task_type', {
    required: true,
    pattern: TASK_TYPE_PATTERN,
    patternHint: 'is not a valid task type: use letters, digits, ".", "_", ":", "/" and "-"',
  });
  const input = reader.json('input');
  const retry = readRetry(reader, defaults.retry);
  const timeoutMs = reader.duration('timeout', { minMs: 1, maxMs: MAX_DURATION_MS }) ?? defaults.timeoutMs;
  reader.done('a compensation (expected task_type, input, retry, timeout)');
  if (taskType === undefined) return undefined;
  return { taskType, input: input === undefined ? null : input, retry, timeoutMs };
}
