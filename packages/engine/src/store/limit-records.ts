/** The kinds of limit. */
export type LimitKind = 'concurrency' | 'semaphore' | 'rate' | 'quota';

/** Every kind of limit, for validation. */
export const LIMIT_KINDS: readonly LimitKind[] = ['concurrency', 'semaphore', 'rate', 'quota'];

/**
 * A limit of a namespace. `concurrency`: most tasks of the task type `name` leased at once; `semaphore`:
 * permits of the semaphore `name`; `rate`: most starts of tasks with rate-limit key `name` per `windowMs`;
 * `quota`: most running runs (its name is empty).
 */
export interface LimitRecord {
  readonly namespace: string;
  readonly kind: LimitKind;
  readonly name: string;
  readonly max: number;
  readonly windowMs: number | null;
  readonly updatedAt?: Date;
}

/** A limit with how much of it is in use now. */
export interface LimitUsage extends LimitRecord {
  /** Tasks or permits held (concurrency, semaphore), starts inside the window (rate), running runs (quota). */
  readonly used: number;
}
