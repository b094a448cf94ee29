import { type DeclaredLimits, LIMIT_NAME_PATTERN, type RateLimitDef, type TaskGates } from './limit-types.js';
import { describeLocated } from './located.js';
import type { MapReader } from './reader.js';

const MAX_WINDOW_MS = 31 * 86_400_000;
const NAME_HINT = 'is not a valid name: use letters, digits, ".", "_", ":", "/" and "-"';

/**
 * Reads a definition's `limits` section:
 *
 *     limits:
 *       concurrency: { payments.charge: 5 }      # per task type
 *       semaphores: { stripe-api: 10 }           # permits, shared by every workflow of the namespace
 *       rates: { mail: { limit: 100, per: 1m } } # starts per window, by key
 *       quota: 500                               # running runs in the namespace
 */
export function readLimits(top: MapReader): DeclaredLimits | undefined {
  const r = top.map('limits');
  if (!r) return undefined;
  const concurrency = readCounts(r, 'concurrency', 0);
  const semaphores = readCounts(r, 'semaphores', 1);
  const rates: Record<string, RateLimitDef> = {};
  const ratesReader = r.map('rates');
  if (ratesReader) {
    for (const entry of ratesReader.source.entries) {
      const item = ratesReader.map(entry.key);
      if (!checkName(ratesReader, entry.key, entry.line) || !item) continue;
      const limit = item.integer('limit', { min: 1, max: 1_000_000 });
      const perMs = item.duration('per', { minMs: 1, maxMs: MAX_WINDOW_MS });
      item.done('a rate limit (expected limit, per)');
      if (limit === undefined) item.problem('is required', entry.line, 'limit');
      if (perMs === undefined && !item.has('per')) item.problem('is required', entry.line, 'per');
      if (limit !== undefined && perMs !== undefined) rates[entry.key] = { limit, perMs };
    }
    ratesReader.done('rates');
  }
  const quota = r.integer('quota', { min: 0, max: 10_000_000 }) ?? null;
  r.done('limits (expected concurrency, semaphores, rates, quota)');
  return { concurrency, semaphores, rates, quota };
}

/** Reads a task node's `semaphores` (`[name]`, or `{name: permits}`) and `rate_limit` (a key). */
export function readTaskGates(r: MapReader): TaskGates {
  const gates: { semaphores?: Record<string, number>; rateLimit?: string } = {};
  const entry = r.entry('semaphores');
  if (entry) {
    const permits: Record<string, number> = {};
    const v = entry.value;
    if (v.kind === 'seq') {
      for (const item of v.items) {
        if (item.kind === 'scalar' && typeof item.value === 'string') {
          if (checkName(r, item.value, item.line, 'semaphores')) permits[item.value] = 1;
        } else r.problem(`must list semaphore names, not ${describeLocated(item)}`, item.line, 'semaphores');
      }
    } else if (v.kind === 'map') {
      for (const e of v.entries) {
        const n = e.value.kind === 'scalar' ? e.value.value : undefined;
        if (!checkName(r, e.key, e.line, 'semaphores')) continue;
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 1_000_000)
          r.problem(`permits for "${e.key}" must be a whole number of at least 1`, e.line, 'semaphores');
        else permits[e.key] = n;
      }
    } else {
      r.problem(
        `must be a list of semaphore names or a map of name: permits, not ${describeLocated(v)}`,
        entry.line,
        'semaphores',
      );
    }
    if (Object.keys(permits).length > 0) gates.semaphores = permits;
  }
  const rate = r.string('rate_limit', { pattern: LIMIT_NAME_PATTERN, patternHint: NAME_HINT });
  if (rate !== undefined) gates.rateLimit = rate;
  return gates;
}

function readCounts(r: MapReader, key: string, min: number): Record<string, number> {
  const out: Record<string, number> = {};
  const reader = r.map(key);
  if (!reader) return out;
  for (const entry of reader.source.entries) {
    if (!checkName(reader, entry.key, entry.line)) {
      reader.entry(entry.key);
      continue;
    }
    const n = reader.integer(entry.key, { min, max: 1_000_000 });
    if (n !== undefined) out[entry.key] = n;
  }
  return out;
}

function checkName(r: MapReader, name: string, line: number, field?: string): boolean {
  if (LIMIT_NAME_PATTERN.test(name)) return true;
  r.problem(`${JSON.stringify(name)} ${NAME_HINT}`, line, field);
  return false;
}
