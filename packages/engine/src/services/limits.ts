import { type DeclaredLimits, LIMIT_NAME_PATTERN, type TaskGates, WeftError } from '@weft/core';
import { LIMIT_KINDS, type LimitKind, type LimitRecord } from '../store/limit-records.js';
import type { Store } from '../store/store.js';

/**
 * The key a limit is enforced under: its advisory lock and its holds rows. `kind:namespace:name`.
 * Namespaces and kinds contain no colon, so the key splits back unambiguously.
 */
export function gateKey(namespace: string, kind: LimitKind, name: string): string {
  return `${kind}:${namespace}:${name}`;
}

/**
 * A task's gates as stored on its queue row: `{"semaphore:stripe": 2, "rate:mail": 1}`; null for none. With a
 * limit key (a bucket, see `limitKeyOf`), each gate is that key's own: `semaphore:stripe#b17`, counted apart
 * from the other keys' under the numbers of the limit named before the `#` (names cannot contain one).
 */
export function queueGates(node: TaskGates, limitKey?: string): Record<string, number> | null {
  const out: Record<string, number> = {};
  const keyed = (name: string) => (limitKey === undefined ? name : `${name}#${limitKey}`);
  for (const [name, permits] of Object.entries(node.semaphores ?? {}))
    out[`semaphore:${keyed(name)}`] = permits;
  if (node.rateLimit) out[`rate:${keyed(node.rateLimit)}`] = 1;
  return Object.keys(out).length > 0 ? out : null;
}

/** The limit rows a definition's `limits` section declares for a namespace. */
export function declaredLimitRows(namespace: string, limits: DeclaredLimits | undefined): LimitRecord[] {
  if (!limits) return [];
  const rows: LimitRecord[] = [];
  for (const [name, max] of Object.entries(limits.concurrency))
    rows.push({ namespace, kind: 'concurrency', name, max, windowMs: null });
  for (const [name, max] of Object.entries(limits.semaphores))
    rows.push({ namespace, kind: 'semaphore', name, max, windowMs: null });
  for (const [name, r] of Object.entries(limits.rates))
    rows.push({ namespace, kind: 'rate', name, max: r.limit, windowMs: r.perMs });
  if (limits.quota !== null)
    rows.push({ namespace, kind: 'quota', name: '', max: limits.quota, windowMs: null });
  return rows;
}

/** Checks a limit given through the API; throws `bad_limit` saying what is wrong. */
export function checkLimit(limit: LimitRecord): void {
  if (!LIMIT_KINDS.includes(limit.kind))
    throw new WeftError('bad_limit', `the kind of limit must be one of ${LIMIT_KINDS.join(', ')}`, 400);
  if (limit.kind === 'quota' ? limit.name !== '' : !LIMIT_NAME_PATTERN.test(limit.name))
    throw new WeftError(
      'bad_limit',
      limit.kind === 'quota'
        ? 'a quota has no name: it covers the whole namespace'
        : `${JSON.stringify(limit.name)} is not a valid ${limit.kind} name: use letters, digits, ".", "_", ":", "/" and "-"`,
      400,
    );
  if (!Number.isInteger(limit.max) || limit.max < 0 || limit.max > 10_000_000)
    throw new WeftError('bad_limit', 'max must be a whole number from 0 to 10,000,000', 400);
  if (limit.kind === 'rate' && (limit.windowMs === null || limit.windowMs < 1))
    throw new WeftError('bad_limit', 'a rate limit needs a window ("per", such as 1s or 1m)', 400);
  if (limit.kind !== 'rate' && limit.windowMs !== null)
    throw new WeftError('bad_limit', `only a rate limit has a window, not a ${limit.kind} limit`, 400);
}

/**
 * Which task types have a concurrency cap, per namespace, as this process last saw it. It decides only
 * whether a task may go straight to a worker (eager dispatch) or must wait for the lease path that counts
 * against the cap; leasing itself always reads the limits table. Refreshed when a limit changes here or
 * on another server (a `limits` wake-up), and every few seconds in case a wake-up was lost.
 */
export class LimitBook {
  private capped = new Map<string, Set<string>>();
  private limited = new Set<string>();
  private loadedAt = 0;
  private loading: Promise<void> | null = null;

  constructor(
    private readonly store: Store,
    private readonly maxAgeMs = 5_000,
  ) {}

  /** True when tasks of this type are capped (so never handed out without counting). */
  isCapped(namespace: string, taskType: string): boolean {
    this.refreshIfOld();
    return this.capped.get(namespace)?.has(taskType) ?? false;
  }

  /** True when the namespace has any limit at all (its finished tasks may free capacity for others). */
  hasLimits(namespace: string): boolean {
    this.refreshIfOld();
    return this.limited.has(namespace);
  }

  /** Namespaces that have any limit (the polls to wake when a task of an unknown namespace ends). */
  limitedNamespaces(): string[] {
    this.refreshIfOld();
    return [...this.limited];
  }

  /** Reloads the book now. */
  async refresh(): Promise<void> {
    if (this.loading) return this.loading;
    this.loading = (async () => {
      try {
        const rows = await this.store.listLimits();
        const capped = new Map<string, Set<string>>();
        const limited = new Set<string>();
        for (const row of rows) {
          limited.add(row.namespace);
          if (row.kind !== 'concurrency') continue;
          let set = capped.get(row.namespace);
          if (!set) {
            set = new Set();
            capped.set(row.namespace, set);
          }
          set.add(row.name);
        }
        this.capped = capped;
        this.limited = limited;
        this.loadedAt = Date.now();
      } finally {
        this.loading = null;
      }
    })();
    return this.loading;
  }

  private refreshIfOld(): void {
    if (Date.now() - this.loadedAt > this.maxAgeMs) this.refresh().catch(() => {});
  }
}
