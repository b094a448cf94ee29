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
 * Ends remembered for waits that begin without a read (see `wait`): the ids of the last this many runs
 * whose end this process heard of, about 1 MB.
 */
const RECENT_ENDS = 10_000;

/**
 * Waits for runs to end, for every `result()` and `settled()` of one engine. It costs nothing per step: a
 * run is read when it is awaited and again when it ends, woken by the engine's run endings (announced after
 * the commit that ends a run, by this process or by another through a PostgreSQL notification; invariant
 * 31). One listener serves every awaited run. For a notification that was lost, a slow safety look asks the
 * store, in one read for all awaited runs, which of them have ended.
 *
 * A wait given the run as this process saw it committed (the handle of a start made here) skips the first
 * read: the run exists and was open, so only its end is awaited. An end that came before the wait began is
 * in the ids of recent ends, and is read then. One that fell out of them (over RECENT_ENDS ends in between)
 * is found by the safety look.
 */
export class RunWaiter {
  private readonly waiting = new Map<string, Set<Waiting>>();
  private timer: NodeJS.Timeout | null = null;
  private looking = false;
  private readonly reads: RunReads;
  /** The ids of the runs whose end was heard of lately, oldest first (a set keeps insertion order). */
  private readonly recent = new Set<string>();

  constructor(
    private readonly engine: Engine,
    /** How often the safety look runs while runs are awaited. */
    private readonly lookMs: number,
  ) {
    this.reads = new RunReads(engine);
    // Listening from the start, so that an end announced before its wait began is remembered.
    this.engine.context.wakeups.ended.listen((ids) => this.ended(ids));
  }

  /**
   * Waits for a run to end and returns it. `seen`: the run as a commit of this process left it (a start's),
   * when the caller has it; an ended one is returned as it is, an open one is not read until its end.
   */
  async wait(runId: string, seen?: RunRecord): Promise<RunRecord> {
    if (seen && isTerminalRun(seen.status)) return seen;
    let wake = () => {};
    const entry: Waiting = { wake: () => wake(), known: seen !== undefined };
    this.add(runId, entry);
    let read = seen === undefined || this.recent.has(runId);
    try {
      for (;;) {
        // Set before the read, so an end announced meanwhile wakes the wait below.
        const woken = new Promise<void>((resolve) => {
          wake = resolve;
        });
        if (read) {
          // Read with the other reads of this turn (a burst of waits, the runs one pass ended): one statement.
          const run = await this.reads.read(runId);
          if (!run) throw new WeftError('run_not_found', `there is no run ${runId}`, 404);
          entry.known = true;
          if (isTerminalRun(run.status)) return run;
        }
        read = true;
        await woken;
      }
    } finally {
      this.remove(runId, entry);
    }
  }

  /** Wakes the waits of runs that ended, and remembers the ends for waits not begun yet. */
  private ended(runIds: readonly string[]): void {
    for (const id of runIds) {
      this.recent.delete(id);
      this.recent.add(id);
    }
    for (const id of this.recent) {
      if (this.recent.size <= RECENT_ENDS) break;
      this.recent.delete(id);
    }
    this.wake(runIds);
  }

  private add(runId: string, entry: Waiting): void {
    let set = this.waiting.get(runId);
    if (!set) {
      set = new Set();
      this.waiting.set(runId, set);
    }
    set.add(entry);
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
