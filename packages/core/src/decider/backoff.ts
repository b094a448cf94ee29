import type { RetryPolicy } from '../definition/node-types.js';

/**
 * How long to wait before the attempt after `failedAttempt`: the policy's delay, multiplied by its factor
 * for each earlier failure when exponential, never more than the cap. Deterministic: no jitter, so the
 * same failure always gives the same schedule.
 */
export function retryDelayMs(policy: RetryPolicy, failedAttempt: number): number {
  if (policy.backoff === 'fixed') return Math.min(policy.delayMs, policy.maxDelayMs);
  const raw = policy.delayMs * policy.factor ** Math.max(0, failedAttempt - 1);
  return Math.min(Number.isFinite(raw) ? Math.round(raw) : policy.maxDelayMs, policy.maxDelayMs);
}
