import type { Evaluator } from '../decisions/evaluator.js';
import type { PassRunner } from '../decisions/pass-runner.js';
import type { Store } from '../store/store.js';
import type { EngineConfig } from '../support/config.js';
import { fault } from '../support/faults.js';
import type { Logger } from '../support/logger.js';
import type { EngineStats } from '../support/stats.js';

/** What the decider uses. */
export interface DeciderDeps {
  readonly store: Store;
  readonly passes: PassRunner;
  readonly evaluator: Evaluator;
  readonly logger: Logger;
  readonly stats: EngineStats;
  readonly config: Pick<EngineConfig, 'decideBatch'>;
}

/**
 * One round of the decider: takes runs with a due decision, locks those no one else holds (SKIP LOCKED),
 * claims their decide-queue rows before reading anything, decides and writes, all in one transaction.
 * A run locked elsewhere keeps its row and is tried next round. If the batch fails, each run is retried
 * alone, and a run whose decision keeps failing is deferred with its error instead of blocking others.
 * Returns true when the batch was full.
 */
export async function decideRound(ctx: DeciderDeps): Promise<boolean> {
  const due = await ctx.store.dueDecisions(ctx.config.decideBatch);
  if (due.length === 0) return false;
  try {
    await decideBatch(ctx, due);
  } catch (batchError) {
    if (due.length === 1) {
      await defer(ctx, due[0]!, batchError);
      return false;
    }
    for (const runId of due) {
      try {
        await decideBatch(ctx, [runId]);
      } catch (error) {
        await defer(ctx, runId, error);
      }
    }
  }
  return due.length >= ctx.config.decideBatch;
}

async function decideBatch(ctx: DeciderDeps, runIds: readonly string[]): Promise<void> {
  const { pass } = await ctx.passes.run(
    null,
    async (tx, pass) => {
      const locked = await tx.lockRuns(runIds, 'skip');
      if (locked.length === 0) return;
      const claimed = new Set(await tx.claimDecisions(locked.map((r) => r.id)));
      // A run whose row is gone was decided by someone else since we looked.
      const items = locked
        .filter((run) => claimed.has(run.id))
        .map((run) => ({ run, claimed: true, own: [] }));
      await ctx.evaluator.decideRuns(tx, items, pass);
      await pass.finish(tx);
    },
    { source: 'decider' },
  );
  await fault('decide.after-commit');
  await ctx.passes.committed(pass);
}

async function defer(ctx: DeciderDeps, runId: string, error: unknown): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  ctx.logger.error({ runId, error: message }, 'a decision failed; it will be retried');
  await ctx.store.transaction((tx) => tx.deferDecision(runId, message, 5_000));
  ctx.stats.decisionsDeferred++;
}
