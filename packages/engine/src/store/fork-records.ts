/** A run started as a fork of another (`StoreTx.recordFork`). */
export interface RunFork {
  readonly runId: string;
  readonly forkedFrom: string;
  /** The node whose output (and its predecessors') the fork reused; null when it reused nothing. */
  readonly upToNode: string | null;
}

/** A run's fork links: the run it was forked from, and the runs forked from it (oldest first). */
export interface ForkLinks {
  readonly forkedFrom: string | null;
  readonly upToNode: string | null;
  readonly forks: readonly string[];
}
