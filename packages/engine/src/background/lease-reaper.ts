import type { RunEvent } from '@weft/core';
import type { GateSlots } from '../extensions/gate-slots.js';
import type { Store } from '../store/store.js';
import type { Wakeups } from '../wakeups/wakeups.js';

/** What the lease reaper uses. */
export interface LeaseReaperDeps {
  readonly store: Store;
  readonly wakeups: Wakeups;
  /** Gate slots held by attempts leased in this process. */
  readonly extensions: { readonly slots: GateSlots };
}

/**
 * One round of the lease reaper: running attempts whose lease (or timeout) passed are ended as timed out
 * and a failure event goes to their run, which retries or fails the node by its policy.
 */
export async function leaseRound(ctx: LeaseReaperDeps): Promise<boolean> {
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
