import type { RunEvent } from '@weft/core';
import type { EngineContext } from '../context.js';
import { inPass } from '../decisions/pass.js';
import { fault } from '../support/faults.js';

/**
 * One round of the decider: takes runs with a due decision, locks those no one else holds (SKIP LOCKED),
 * claims their decide-queue rows before reading anything, decides and writes, all in one transaction.
 * A run locked elsewhere keeps its row and is tried next round. If the batch fails, each run is retried
 * alone, and a run whose decision keeps failing is deferred with its error instead of blocking others.
 * Returns true when the batch was full.
 */
export async function decideRound(ctx: EngineContext): Promise<boolean> {
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

async function decideBatch(ctx: EngineContext, runIds: readonly string[]): Promise<void> {
  const { pass } = await inPass(ctx, null, async (tx, pass) => {
    const locked = await tx.lockRuns(runIds, 'skip');
    if (locked.length === 0) return;
    const claimed = new Set(await tx.claimDecisions(locked.map((r) => r.id)));
    // A run whose row is gone was decided by someone else since we looked.
    const items = locked.filter((run) => claimed.has(run.id)).map((run) => ({ run, claimed: true, own: [] }));
    await ctx.evaluator.decideRuns(tx, items, pass);
    await pass.finish(tx);
  });
  await fault('decide.after-commit');
  await pass.afterCommit(ctx.wakeups);
}

async function defer(ctx: EngineContext, runId: string, error: unknown): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  ctx.logger.error({ runId, error: message }, 'a decision failed; it will be retried');
  await ctx.store.transaction((tx) => tx.deferDecision(runId, message, 5_000));
  ctx.stats.decisionsDeferred++;
}

/**
 * One round of the timer poller: finds due timers, asks for a decision on their runs first (lock order:
 * decide-queue rows before timers), then deletes the timers it can lock and puts their events in the run
 * inboxes, all in one transaction. Two pollers never fire one timer twice (SKIP LOCKED on delete).
 */
export async function timerRound(ctx: EngineContext): Promise<boolean> {
  const due = await ctx.store.dueTimers(200);
  if (due.length === 0) return false;
  const fired = await ctx.store.transaction(async (tx) => {
    await tx.requestDecisions([...new Set(due.map((t) => t.runId))], 'timer');
    const events = await tx.takeTimers(due);
    await tx.appendInbox(events);
    return events.length;
  });
  if (fired > 0) ctx.wakeups.announce([{ kind: 'decisions' }]);
  return due.length >= 200;
}

/**
 * One round of the lease reaper: running attempts whose lease (or timeout) passed are ended as timed out
 * and a failure event goes to their run, which retries or fails the node by its policy.
 */
export async function leaseRound(ctx: EngineContext): Promise<boolean> {
  // Slots of attempts that ended elsewhere (another server's reaper, a cancel) are released here.
  await ctx.extensions.slots.sweep(ctx.store);
  const expired = await ctx.store.expiredLeases(200);
  if (expired.length === 0) return false;
  const ended = await ctx.store.transaction(async (tx) => {
    await tx.requestDecisions([...new Set(expired.map((t) => t.runId))], 'lease expired');
    const done = await tx.expireLeases(expired);
    await tx.appendInbox(
      done.map((t) => {
        const event: RunEvent = {
          kind: 'node_failed',
          nodeId: t.nodeId,
          iteration: t.iteration,
          attempt: t.attempt,
          error: t.timedOut
            ? { reason: 'timeout', retryable: true, message: 'the attempt ran longer than its timeout' }
            : {
                reason: 'lease_expired',
                retryable: true,
                message: `worker ${t.worker ?? '(unknown)'} stopped renewing its lease`,
              },
        };
        return { runId: t.runId, event };
      }),
    );
    return done;
  });
  // Gate slots of attempts that lost their lease are free again.
  for (const t of ended) await ctx.extensions.slots.release(t.taskId, t.attempt);
  if (ended.length > 0) ctx.wakeups.announce([{ kind: 'decisions' }]);
  return expired.length >= 200;
}
