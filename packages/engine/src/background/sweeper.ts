import type { Evaluator } from '../decisions/evaluator.js';
import type { PassRunner } from '../decisions/pass-runner.js';
import type { Store } from '../store/store.js';
import type { EngineConfig } from '../support/config.js';
import type { Logger } from '../support/logger.js';
import { describeRepairs } from './repair-audit.js';

/** What the sweeper uses. */
export interface SweeperDeps {
  readonly store: Store;
  readonly passes: PassRunner;
  readonly evaluator: Evaluator;
  readonly logger: Logger;
  readonly config: Pick<EngineConfig, 'sweepIdleMs'>;
}

/** What the sweeper has done since this engine started. */
export interface SweeperStats {
  /** Rounds run. */
  rounds: number;
  /** Runs found stuck and repaired. In a healthy system this stays 0. */
  repaired: number;
  /** The runs repaired most recently (up to 20), newest first. */
  recent: string[];
  /** Repairs checked by a later round: the run had moved on, or was as stuck as before. */
  checkedMoved: number;
  checkedStuck: number;
  lastRoundAt: Date | null;
}

/**
 * The stuck-run sweeper, defence in depth (invariant 26): it finds running and compensating runs with nothing
 * that could ever wake them (no queued or running task, no timer, no pending decision or inbox event) that
 * have been idle for `idleMs`, and repairs each by deciding a `run_swept` event for it, which looks at every
 * node again (a compensating run: its saga log) and records `run.repaired` in the run's history. Runs waiting
 * for a rate-limit slot are not stuck: their task is queued (held back on the queue until its window has
 * room), so they have a queued task.
 *
 * A candidate is re-checked by a statement that starts after its row lock is held (taken with SKIP LOCKED: a
 * run locked by someone else is being decided, so it is not stuck), and decided in the same transaction. In a
 * healthy system the sweeper finds nothing (test: "finds nothing in a healthy system, even with no idle
 * threshold").
 */
export class Sweeper {
  readonly stats: SweeperStats = {
    rounds: 0,
    repaired: 0,
    recent: [],
    checkedMoved: 0,
    checkedStuck: 0,
    lastRoundAt: null,
  };

  constructor(private readonly ctx: SweeperDeps) {}

  /** One round; returns the runs repaired. `idleMs` overrides the configured threshold. */
  async round(idleMs = this.ctx.config.sweepIdleMs): Promise<string[]> {
    this.stats.rounds++;
    this.stats.lastRoundAt = new Date();
    await this.ctx.store.tidyInbox(500);
    await this.checkEarlierRepairs(idleMs);
    const candidates = await this.ctx.store.stuckRuns(idleMs, 100);
    if (candidates.length === 0) return [];
    const { result: repaired, pass } = await this.ctx.passes.run(
      null,
      async (tx, pass) => {
        const locked = await tx.lockRuns(candidates, 'skip');
        const stuck = new Set(
          await tx.stillStuck(
            locked.map((r) => r.id),
            idleMs,
          ),
        );
        const runs = locked.filter((r) => stuck.has(r.id));
        await this.ctx.evaluator.decideRuns(
          tx,
          runs.map((run) => ({ run, claimed: false, own: [{ kind: 'run_swept', idleMs }] })),
          pass,
        );
        // The audit, in the repair's transaction: a repair and its row commit together or not at all.
        if (runs.length > 0) await tx.recordRepairs?.(describeRepairs(runs, pass.writes));
        await pass.finish(tx);
        return runs.map((r) => r.id);
      },
      { source: 'sweeper' },
    );
    await this.ctx.passes.committed(pass);
    if (repaired.length > 0) {
      this.stats.repaired += repaired.length;
      this.stats.recent = [...repaired.reverse(), ...this.stats.recent].slice(0, 20);
      this.ctx.logger.warn({ runs: repaired }, `the sweeper repaired ${repaired.length} stuck run(s)`);
    }
    return repaired;
  }

  /**
   * Checks repairs made at least one idle threshold ago: a run as stuck as before after that long would be
   * found again, so whether it moved is known by then.
   */
  private async checkEarlierRepairs(idleMs: number): Promise<void> {
    const check = await this.ctx.store.checkRepairs?.(idleMs, 500);
    if (!check) return;
    this.stats.checkedMoved += check.moved;
    this.stats.checkedStuck += check.stuck;
    if (check.stuck > 0)
      this.ctx.logger.warn(
        { runs: check.stuck },
        `${check.stuck} run(s) the sweeper repaired did not move after the repair: see GET /v1/sweeper/repairs`,
      );
  }
}
