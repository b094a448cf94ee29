import type { Extensions } from '../../extensions/extensions.js';
import type { StepOutcome } from '../../extensions/hooks.js';
import type { ReportVerdict, TaskReport } from '../../store/records.js';

/**
 * After a batch of reports committed: every reported attempt's gate slot is released (completed, failed,
 * or refused because the lease was lost: in each case the attempt no longer runs for this worker), and
 * `afterStep` is told of each applied report.
 */
export async function afterReports(
  ctx: { readonly extensions: Pick<Extensions, 'slots' | 'stepsDone'> },
  request: { readonly namespace: string; readonly worker: string; readonly reports: readonly TaskReport[] },
  verdicts: readonly ReportVerdict[],
): Promise<void> {
  for (const r of request.reports) await ctx.extensions.slots.release(r.taskId, r.attempt);
  const steps: StepOutcome[] = [];
  request.reports.forEach((report, i) => {
    const v = verdicts[i];
    if (!v?.accepted) return;
    steps.push({
      namespace: request.namespace,
      runId: report.runId,
      taskId: report.taskId,
      nodeId: v.nodeId,
      iteration: v.iteration,
      attempt: v.attempt,
      worker: request.worker,
      outcome: report.outcome,
    });
  });
  await ctx.extensions.stepsDone(steps);
}
