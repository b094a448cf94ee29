import type { LeasedTask, ReportVerdict, TaskReport } from '../../store/records.js';
import type { EngineMeter } from '../../support/meter.js';

/**
 * Counts the accepted reports of a batch: each task's type, outcome and how long it ran, as the store's
 * fenced update returned them (no statement of its own).
 */
export function measureReports(
  meter: EngineMeter,
  reports: readonly TaskReport[],
  verdicts: readonly ReportVerdict[],
): void {
  const outcome = new Map(reports.map((r) => [r.taskId, r.outcome.kind]));
  for (const v of verdicts) {
    if (!v.accepted || v.ranSeconds === undefined || !v.taskType) continue;
    meter.taskFinished(v.taskType, outcome.get(v.taskId) ?? 'completed', Math.max(0, v.ranSeconds));
  }
}

/** Counts leased tasks' waits, as their lease returned them (tasks without a `waited` are not counted). */
export function measureLeases(meter: EngineMeter, tasks: readonly LeasedTask[]): void {
  for (const t of tasks)
    if (t.waited) meter.taskLeased(t.taskType, t.waited.queueSeconds, t.waited.stepSeconds);
}
