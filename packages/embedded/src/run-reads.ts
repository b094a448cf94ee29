import type { Engine, RunRecord } from '@weft/engine';

/** Most runs in one read. */
const READ_BATCH = 1000;

/**
 * Reads runs for the waits of one engine, the reads asked for in one turn of the event loop together: a
 * burst of awaited runs, or of runs ending in one pass, costs one statement, not one a run (with a store
 * that reads many runs at once, `getRuns`; otherwise one by one).
 */
export class RunReads {
  private pending = new Map<string, ((run: RunRecord | null) => void)[]>();
  private failing = new Map<string, ((error: unknown) => void)[]>();
  private scheduled = false;

  constructor(private readonly engine: Engine) {}

  /** The run, or null when there is none with this id. */
  read(runId: string): Promise<RunRecord | null> {
    return new Promise((resolve, reject) => {
      this.pending.set(runId, [...(this.pending.get(runId) ?? []), resolve]);
      this.failing.set(runId, [...(this.failing.get(runId) ?? []), reject]);
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const pending = this.pending;
    const failing = this.failing;
    this.pending = new Map();
    this.failing = new Map();
    this.scheduled = false;
    const ids = [...pending.keys()];
    for (let i = 0; i < ids.length; i += READ_BATCH) {
      const batch = ids.slice(i, i + READ_BATCH);
      try {
        const found = new Map((await this.readMany(batch)).map((r) => [r.id, r]));
        for (const id of batch) for (const resolve of pending.get(id)!) resolve(found.get(id) ?? null);
      } catch (error) {
        for (const id of batch) for (const reject of failing.get(id)!) reject(error);
      }
    }
  }

  private async readMany(ids: readonly string[]): Promise<RunRecord[]> {
    const store = this.engine.context.store;
    if (store.getRuns) return store.getRuns(ids);
    const runs = await Promise.all(ids.map((id) => store.getRun(id)));
    return runs.filter((r): r is RunRecord => r !== null);
  }
}
