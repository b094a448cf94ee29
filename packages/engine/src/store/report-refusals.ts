import type { ReportVerdict, TaskReport } from './records.js';

/** A report (or heartbeat) as far as its fencing goes: which attempt of which task, under which token. */
export type FencedReport = Pick<TaskReport, 'runId' | 'taskId' | 'attempt' | 'leaseToken'>;

/** A reported task as a store reads it now, to say why a report on it is refused. */
export interface ReportedTask {
  readonly id: string;
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
  readonly status: string;
  readonly leaseToken: string | null;
  /** True when the attempt's own deadline has passed. */
  readonly pastDeadline: boolean;
  /** The latest attempt of the task's node instance. */
  readonly latest: number;
  /** The namespace of the task's run. */
  readonly namespace: string | undefined;
}

/**
 * Why a report on a task is refused, as the task is now, in the words every store gives (the store
 * conformance suite checks them); null when nothing refuses it. `task` is null when there is no such
 * task. A refusal carries the task's node instance, so it can be recorded in the run's history, except
 * when the task is missing or belongs to another namespace than the reporter's.
 */
export function reportRefusal(
  report: FencedReport,
  task: ReportedTask | null,
  namespace: string | undefined,
): ReportVerdict | null {
  if (!task)
    return { taskId: report.taskId, accepted: false, why: `no task ${report.taskId} in run ${report.runId}` };
  if (namespace !== undefined && task.namespace !== namespace)
    return {
      taskId: report.taskId,
      accepted: false,
      why: `the task belongs to namespace "${task.namespace}", not "${namespace}"`,
    };
  const why = fencingRefusal(report, task);
  return why === null ? null : refused(report, task, why);
}

/**
 * Why a report that did not land was refused. When the task as read now would accept it, it changed
 * between the report's statement and this read, and the verdict says so.
 */
export function explainRefusal(
  report: FencedReport,
  task: ReportedTask | null,
  namespace: string | undefined,
): ReportVerdict {
  return (
    reportRefusal(report, task, namespace) ??
    refused(report, task!, 'the task changed while the report was applied')
  );
}

/** The first fence the report fails, in order: attempt, latest attempt, status, lease token, deadline. */
function fencingRefusal(report: FencedReport, task: ReportedTask): string | null {
  if (task.attempt !== report.attempt)
    return `the report names attempt ${report.attempt}, but task ${task.id} is attempt ${task.attempt}`;
  if (task.latest > task.attempt)
    return `the report is for attempt ${task.attempt}, but attempt ${task.latest} is current`;
  if (task.status !== 'running') return `the task is already ${task.status.replace('_', ' ')}`;
  if (task.leaseToken !== report.leaseToken)
    return 'the lease token does not match: the lease was lost or taken over';
  if (task.pastDeadline) return "the attempt's timeout has passed";
  return null;
}

function refused(report: FencedReport, task: ReportedTask, why: string): ReportVerdict {
  return {
    taskId: report.taskId,
    accepted: false,
    why,
    nodeId: task.nodeId,
    iteration: task.iteration,
    attempt: report.attempt,
  };
}
