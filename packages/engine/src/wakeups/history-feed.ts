/**
 * Tells live history readers in this process (SSE streams) that a run's history grew, right after the
 * commit. Only a hint: a reader always reads the history table from its last sequence number, so a lost
 * hint costs latency (the reader's poll interval), never an event. Readers on other servers rely on that
 * poll.
 */
export class HistoryFeed {
  private readonly listeners = new Map<string, Set<() => void>>();

  /** Calls `fn` whenever the run's history may have grown; returns a function that stops. */
  subscribe(runId: string, fn: () => void): () => void {
    let set = this.listeners.get(runId);
    if (!set) {
      set = new Set();
      this.listeners.set(runId, set);
    }
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.listeners.get(runId) === set) this.listeners.delete(runId);
    };
  }

  /** Wakes the readers of these runs. */
  notify(runIds: Iterable<string>): void {
    if (this.listeners.size === 0) return;
    for (const runId of runIds) for (const fn of this.listeners.get(runId) ?? []) fn();
  }

  /** How many runs have readers (for tests and metrics). */
  get size(): number {
    return this.listeners.size;
  }
}
