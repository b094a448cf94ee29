import { isTerminalRun, WeftError } from '@weft/core';
import type { Engine, RunRecord } from '@weft/engine';
import { RunReads } from './run-reads.js';

/** One `result()` or `settled()` waiting; `known` once its run has been read (its id names a run). */
interface Waiting {
  wake: () => void;
  known: boolean;
}

/** Most run ids in one safety look's read. */
const LOOK_BATCH = 1000;

/**
 * Waits for runs to end, for every `result()` and `settled()` of one engine. It costs nothing per step: a
 * run is read when it is awaited and again when it ends, woken by the engine's run endings (announced after
 * the commit that ends a run, by this process or by another through a PostgreSQL notification; invariant
 * 31). One listener serves every awaited run. For a notification that was lost, a slow safety look asks the
 * store, in one read for all awaited runs, which of them have ended.
 */
export class RunWaiter {
  private readonly waiting = new Map<string, Set<Waiting>>();
  private listening = false;
  private timer: NodeJS.Timeout | null = null;
  private looking = false;
  private readonly reads: RunReads;

  constructor(
    private readonly engine: Engine,
    /** How often the safety look runs while runs are awaited. */
    private readonly lookMs: number,
  ) {
    this.reads = new RunReads(engine);
  }

  /** Waits for a run to end and returns it. */
  async wait(runId: string): Promise<RunRecord> {
    let wake = () => {};
    const entry: Waiting = { wake: () => wake(), known: false };
    this.add(runId, entry);
    try {
      for (;;) {
        // Set before the read, so an end announced meanwhile wakes the wait below.
        const woken = new Promise<void>((resolve) => {
          wake = resolve;
        });
        // Read with the other reads of this turn (a burst of waits, the runs one pass ended): one statement.
        const run = await this.reads.read(runId);
        if (!run) throw new WeftError('run_not_found', `there is no run ${runId}`, 404);
        entry.known = true;
        if (isTerminalRun(run.status)) return run;
        await woken;
      }
    } finally {
      this.remove(runId, entry);
    }
  }

  private add(runId: string, entry: Waiting): void {
    let set = this.waiting.get(runId);
    if (!set) {
      set = new Set();
      this.waiting.set(runId, set);
    }
    set.add(entry);
    // One listener for the engine's lifetime, whatever the number of awaited runs.
    if (!this.listening) this.engine.context.wakeups.ended.listen((ids) => this.wake(ids));
    this.listening = true;
    if (!this.timer) {
      this.timer = setInterval(() => void this.look(), this.lookMs);
      this.timer.unref();
    }
  }

  private remove(runId: string, entry: Waiting): void {
    const set = this.waiting.get(runId);
    set?.delete(entry);
    if (set?.size === 0) this.waiting.delete(runId);
    if (this.waiting.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private wake(runIds: Iterable<string>): void {
    for (const id of runIds) for (const entry of this.waiting.get(id) ?? []) entry.wake();
  }

  /** The safety look: which awaited runs ended without their notification reaching this process. */
  private async look(): Promise<void> {
    if (this.looking) return;
    this.looking = true;
    try {
      const ids = [...this.waiting].filter(([, set]) => [...set].some((e) => e.known)).map(([id]) => id);
      const store = this.engine.context.store;
      for (let i = 0; i < ids.length; i += LOOK_BATCH) {
        const batch = ids.slice(i, i + LOOK_BATCH);
        // A store that cannot tell which ended: every awaited run reads itself again.
        this.wake(store.endedRuns ? await store.endedRuns(batch) : batch);
      }
    } catch (error) {
      this.engine.context.logger.warn({ error: String(error) }, 'could not look for ended runs');
    } finally {
      this.looking = false;
    }
  }
}
