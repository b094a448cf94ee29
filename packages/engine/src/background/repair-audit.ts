import type { LockedRun } from '../store/records.js';
import type { RepairRow } from '../store/repair-records.js';
import type { WriteSet } from '../store/write-set.js';

/**
 * The audit rows of the runs a sweeper pass repaired: what each repair changed, read from the pass's own
 * writes (history, attempts, timers, the run's row), before they are written.
 */
export function describeRepairs(runs: readonly LockedRun[], writes: WriteSet): RepairRow[] {
  return runs.map((run) => {
    const mine = <T extends { readonly runId: string }>(rows: readonly T[]) =>
      rows.filter((r) => r.runId === run.id);
    const history = mine(writes.history);
    const seqs = history.map((h) => h.seq);
    const update = mine(writes.runUpdates).at(-1);
    return {
      runId: run.id,
      namespace: run.namespace,
      definition: run.definitionName,
      status: run.status,
      changed: {
        events: history.map((h) => h.type),
        tasks: mine(writes.newTasks).map((t) => ({
          node: t.nodeId,
          iteration: t.iteration,
          attempt: t.attempt,
        })),
        taskUpdates: mine(writes.taskUpdates).length,
        timers: mine(writes.timers).length,
        status: update?.status && update.status !== run.status ? update.status : null,
      },
      // A repair always records `run.repaired`; without history the run's last number stands for both.
      firstSeq: seqs.length > 0 ? Math.min(...seqs) : run.lastSeq,
      lastSeq: seqs.length > 0 ? Math.max(...seqs) : run.lastSeq,
    };
  });
}
