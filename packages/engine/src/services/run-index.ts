/**
 * Which definition version each recent run belongs to, remembered in this process; the oldest are dropped
 * past `capacity`. It lets a report read ahead for its runs in the same round trip that locks them. A run
 * moved to another version by another server leaves a stale entry here: that only makes the read-ahead a
 * worse guess, since the decision itself uses the version of the run row it locked.
 */
export class RunIndex {
  private readonly definitions = new Map<string, string>();

  constructor(private readonly capacity = 200_000) {}

  /** Remembers a run's definition version id. */
  remember(runId: string, definitionId: string): void {
    if (this.definitions.has(runId)) return;
    this.definitions.set(runId, definitionId);
    if (this.definitions.size > this.capacity)
      this.definitions.delete(this.definitions.keys().next().value as string);
  }

  /** Remembers the version a run was moved to. */
  moved(runId: string, definitionId: string): void {
    this.definitions.delete(runId);
    this.remember(runId, definitionId);
  }

  /** The run's definition version id, if known here. */
  definitionOf(runId: string): string | undefined {
    return this.definitions.get(runId);
  }
}
