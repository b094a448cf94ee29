import type { Json } from '@weft/core';

/** What progress is counted from: a history event as a pass writes it. */
export interface ProgressEvent {
  readonly runId: string;
  readonly type: string;
  readonly nodeId: string | null;
  readonly iteration: string | null;
  readonly attempt: number | null;
  readonly data: Json;
}

/**
 * A run's progress: its steps (worker tasks, http calls and human tasks, each node instance once, however
 * many attempts it takes) known so far, completed, failed for good, and running (an attempt scheduled,
 * leased or waiting for a person, and not ended). Kept on the run's row by the statement that appends
 * the history it is counted from, in the same transaction.
 */
export interface RunProgress {
  readonly known: number;
  readonly completed: number;
  readonly failed: number;
  readonly running: number;
}

/** How one pass changes a run's progress. */
export interface ProgressDelta extends RunProgress {
  readonly runId: string;
}

/** A run with no step yet. */
export const NO_PROGRESS: RunProgress = { known: 0, completed: 0, failed: 0, running: 0 };

type Counts = { known: number; completed: number; failed: number; running: number };

/**
 * The progress a batch of history events makes, per run (runs whose counts do not change are left out).
 * A step becomes known with its first attempt (`task.scheduled`, `human.opened`); each attempt runs from
 * then until its first ending event (`task.completed`, `task.failed`, `human.expired`: an attempt whose
 * deadline passes and that then fails the run ends once). A child run's completion (`task.completed`
 * with `child_run_id`) is the child's progress, not a step of this run.
 */
export function progressDeltas(rows: readonly ProgressEvent[]): ProgressDelta[] {
  const byRun = new Map<string, Counts>();
  const ended = new Set<string>();
  const counts = (runId: string): Counts => {
    let c = byRun.get(runId);
    if (!c) {
      c = { known: 0, completed: 0, failed: 0, running: 0 };
      byRun.set(runId, c);
    }
    return c;
  };
  for (const row of rows) {
    const attemptKey = `${row.runId}/${row.nodeId}/${row.iteration}/${row.attempt}`;
    const data =
      typeof row.data === 'object' && row.data !== null && !Array.isArray(row.data) ? row.data : {};
    const end = (c: Counts) => {
      if (ended.has(attemptKey)) return;
      ended.add(attemptKey);
      c.running--;
    };
    switch (row.type) {
      case 'task.scheduled':
      case 'human.opened': {
        const c = counts(row.runId);
        c.running++;
        if ((row.attempt ?? 1) <= 1) c.known++;
        break;
      }
      case 'task.completed':
        if (data.child_run_id !== undefined) break;
        counts(row.runId).completed++;
        end(counts(row.runId));
        break;
      case 'task.failed': {
        const c = counts(row.runId);
        if (data.final === true) c.failed++;
        end(c);
        break;
      }
      case 'human.expired':
        end(counts(row.runId));
        break;
    }
  }
  return [...byRun.entries()]
    .filter(([, c]) => c.known !== 0 || c.completed !== 0 || c.failed !== 0 || c.running !== 0)
    .map(([runId, c]) => ({ runId, ...c }));
}
