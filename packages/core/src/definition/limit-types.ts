/** Names of semaphores and rate-limit keys: letters, digits, `.`, `_`, `:`, `/` and `-`. */
export const LIMIT_NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/;

/** A rate limit: at most `limit` starts in any window of `perMs`. */
export interface RateLimitDef {
  readonly limit: number;
  readonly perMs: number;
}

/**
 * Limits a definition declares for its namespace. Deploying the definition sets them (the last deploy that
 * declares a limit wins; the API can change them too). Each is shared by every workflow of the namespace.
 */
export interface DeclaredLimits {
  /** Most tasks of a task type leased at once. */
  readonly concurrency: Readonly<Record<string, number>>;
  /** Permits of named semaphores. */
  readonly semaphores: Readonly<Record<string, number>>;
  /** Starts per time window, by rate-limit key. */
  readonly rates: Readonly<Record<string, RateLimitDef>>;
  /** Most running runs in the namespace. */
  readonly quota: number | null;
}

/** What a task takes from limits while it runs, besides its task type's concurrency cap. */
export interface TaskGates {
  /** Permits needed from each named semaphore, all or nothing. */
  readonly semaphores?: Readonly<Record<string, number>>;
  /** The rate-limit key each start of the task counts against. */
  readonly rateLimit?: string;
}
