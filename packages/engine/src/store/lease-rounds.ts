import type { LeasedTask } from './records.js';
import type { FastLease, LeaseOutcome, LeaseRequest } from './store-types.js';

/** The two lease paths of a store, as one round each (see `leaseInRounds`). */
export interface LeasePaths {
  /** One round of the fast path: rows under no limit, best first. */
  fast(request: LeaseRequest): Promise<FastLease>;
  /** The gated path: rows under limits, each admitted only while every limit it needs has room. */
  gated(request: LeaseRequest): Promise<LeaseOutcome>;
}

/** `LeasePaths` of a store whose operations return at once (the in-memory store). */
export interface LeasePathsNow {
  fast(request: LeaseRequest): FastLease;
  gated(request: LeaseRequest): LeaseOutcome;
}

/**
 * The lease loop every store's `leaseTasks` runs, one decision at a time: fast rounds while they take
 * rows (a row whose task was cancelled is taken and leases nothing, so a full round may lease less than
 * asked) until the request is filled, the queue is empty for these types, or ten rounds have run; then,
 * when rows under a limit wait, the gated path for the rest. `retryAt` is the earliest time a task held
 * back by a rate limit may be tried again.
 */
export class LeaseRounds {
  private readonly out: LeasedTask[] = [];
  private gated = false;
  private retryAt: Date | null = null;
  private rounds = 0;
  private done = false;

  constructor(private readonly request: LeaseRequest) {}

  /** The request of the next fast round, or null when the fast path is over. */
  nextFast(): LeaseRequest | null {
    if (this.done || this.rounds >= 10 || this.out.length >= this.request.max) return null;
    this.rounds++;
    return { ...this.request, max: this.request.max - this.out.length };
  }

  /** What the fast round took. */
  tookFast(step: FastLease): void {
    this.out.push(...step.tasks);
    this.gated = step.gated;
    this.retryAt = step.nextAt;
    const asked = this.request.max - (this.out.length - step.tasks.length);
    if (this.gated || step.taken < asked || step.tasks.length === step.taken) this.done = true;
  }

  /** The request of the gated path, or null when it need not run. */
  nextGated(): LeaseRequest | null {
    if (!this.gated || this.out.length >= this.request.max) return null;
    return { ...this.request, max: this.request.max - this.out.length };
  }

  /** The lease's outcome, with what the gated path leased if it ran. */
  outcome(more: LeaseOutcome | null): LeaseOutcome {
    if (!more) return { tasks: this.out, retryAt: this.retryAt };
    const times = [this.retryAt, more.retryAt].filter((t): t is Date => t !== null).map((t) => t.getTime());
    return {
      tasks: [...this.out, ...more.tasks],
      retryAt: times.length > 0 ? new Date(Math.min(...times)) : null,
    };
  }
}

/** Runs the lease loop over a store's two paths (see `LeaseRounds`). */
export async function leaseInRounds(request: LeaseRequest, paths: LeasePaths): Promise<LeaseOutcome> {
  const rounds = new LeaseRounds(request);
  for (let next = rounds.nextFast(); next; next = rounds.nextFast()) rounds.tookFast(await paths.fast(next));
  const rest = rounds.nextGated();
  return rounds.outcome(rest ? await paths.gated(rest) : null);
}

/** `leaseInRounds` for paths that return at once: nothing else runs between its rounds. */
export function leaseInRoundsNow(request: LeaseRequest, paths: LeasePathsNow): LeaseOutcome {
  const rounds = new LeaseRounds(request);
  for (let next = rounds.nextFast(); next; next = rounds.nextFast()) rounds.tookFast(paths.fast(next));
  const rest = rounds.nextGated();
  return rounds.outcome(rest ? paths.gated(rest) : null);
}
