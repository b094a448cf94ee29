import type { Cascader } from '../cascade.js';
import { RUNS_DESTINATION } from './types.js';

/**
 * Stops the child runs of a run that is stopped (cancelled, terminated, failed, or completed with branches
 * still open): for each unfinished attempt that started a child, a `cancel_run` outbox row (terminate when
 * the parent was terminated), written in the transaction that stops the parent. It reads the attempts
 * before they are cancelled and locks nothing: the child is stopped by the relay, in its own transaction
 * under its own lock, so this transaction never waits on a child (docs/contributing.md, lock order).
 *
 * A child whose start is still in the outbox gets a cancel too: delivered first, it finds no run and does
 * nothing; the start then finds its attempt cancelled and starts nothing. A start being delivered right now
 * holds its attempt's row (`FOR SHARE`), so cancelling the attempt waits for it and the cancel then finds
 * the child (test: "a cancel racing a child start leaves no orphan").
 */
export const childRunCascader: Cascader = {
  name: 'child-runs',
  async stop(tx, writes, stopped) {
    const children = await tx.openChildren(stopped.map((s) => s.runId));
    if (children.length === 0) return;
    const why = new Map(stopped.map((s) => [s.runId, s]));
    for (const child of children) {
      const parent = why.get(child.runId)!;
      writes.outbox.push({
        runId: child.runId,
        namespace: child.namespace,
        taskId: null,
        destination: RUNS_DESTINATION,
        messageId: `${parent.mode}:${child.childRunId}`,
        payload: {
          kind: 'cancel_run',
          runId: child.childRunId,
          by: `parent run ${child.runId}`,
          reason: parent.reason,
          mode: parent.mode,
        },
      });
    }
  },
};
