import type { Store } from '../store/store.js';
import type { Wakeups } from '../wakeups/wakeups.js';

/** What the timer loop uses. */
export interface TimerDeps {
  readonly store: Store;
  readonly wakeups: Wakeups;
}

/**
 * One round of the timer loop: finds due timers, asks for a decision on their runs first (lock order:
 * decide-queue rows before timers), then deletes the timers it can lock and puts their events in the run
 * inboxes, all in one transaction. Two timer loops never fire one timer twice (SKIP LOCKED on delete).
 */
export async function timerRound(ctx: TimerDeps): Promise<boolean> {
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
