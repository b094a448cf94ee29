import type { Cascader } from '../decisions/cascade.js';

/**
 * Stops the child runs of a run that is stopped (cancelled, terminated, failed, or completed with branches
 * still open). It only adds a write to the stopping transaction: the store writes, in the same pipeline and
 * before the attempts are cancelled, a `cancel_run` outbox row (terminate when the parent was terminated)
 * for each unfinished attempt that started a child. It reads nothing and locks nothing here: the child is
 * stopped by the relay, in its own transaction under its own lock, so this transaction never waits on a
 * child (docs/contributing.md, lock order), and a stop costs no extra round trip.
 *
 * A child whose start is still in the outbox gets a cancel too: delivered first, it finds no run and does
 * nothing; the start then finds its attempt cancelled and starts nothing. A start being delivered right now
 * holds its attempt's row (`FOR SHARE`), so cancelling the attempt waits for it and the cancel then finds
 * the child (test: "a cancel racing a child start leaves no orphan").
 */
export const childRunCascader: Cascader = {
  name: 'child-runs',
  async stop(_tx, writes, stopped) {
    writes.stopChildren.push(...stopped);
  },
};
