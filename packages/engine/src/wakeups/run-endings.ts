/**
 * Tells this process which runs have just ended: announced after the commit that ends them, by the pass that
 * ended them here or by another process's notification (invariant 31). Only a hint: whoever awaits a run
 * reads it from the store, and looks again now and then for a hint that was lost.
 */
export class RunEndings {
  private readonly listeners = new Set<(runIds: readonly string[]) => void>();

  /** Calls `fn` with the ids of runs that ended; returns a function that stops. */
  listen(fn: (runIds: readonly string[]) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Tells the listeners that these runs ended. */
  notify(runIds: readonly string[]): void {
    if (runIds.length === 0) return;
    for (const fn of this.listeners) fn(runIds);
  }

  /** How many listen (for tests). */
  get size(): number {
    return this.listeners.size;
  }
}
