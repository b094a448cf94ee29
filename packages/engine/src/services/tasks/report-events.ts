import type { RunEvent } from '@weft/core';
import type { ReportVerdict, TaskReport } from '../../store/records.js';
import type { ReportRequest } from './task-requests.js';

/**
 * A request's reports, each once: a report repeated in the same request (same task, attempt and lease
 * token) would otherwise land once but be accepted twice, and its run would record the completion twice
 * (test: "a report sent twice in one request is applied once"). `indexOf` maps each report of the request
 * to its place in `reports`.
 */
export function distinctReports(all: readonly TaskReport[]): { reports: TaskReport[]; indexOf: number[] } {
  const reports: TaskReport[] = [];
  const seen = new Map<string, number>();
  const indexOf = all.map((r) => {
    const key = `${r.runId}/${r.taskId}/${r.attempt}/${r.leaseToken}`.toLowerCase();
    let at = seen.get(key);
    if (at === undefined) {
      at = reports.length;
      seen.set(key, at);
      reports.push(r);
    }
    return at;
  });
  return { reports, indexOf };
}

/** The events a batch of reports produced, by run. */
export function eventsByRun(
  request: ReportRequest,
  verdicts: readonly ReportVerdict[],
): Map<string, RunEvent[]> {
  const events = new Map<string, RunEvent[]>();
  request.reports.forEach((report, i) => {
    const event = toEvent(report, verdicts[i]!, request.worker);
    if (!event) return;
    const list = events.get(report.runId) ?? [];
    list.push(event);
    events.set(report.runId, list);
  });
  return events;
}

/** What the reports will most likely turn into, from the workers' hints, for reading ahead. */
export function hintEvents(reports: readonly TaskReport[]): RunEvent[] {
  return reports.flatMap((r): RunEvent[] =>
    r.nodeId === undefined
      ? []
      : [{ kind: 'node_completed', nodeId: r.nodeId, iteration: r.iteration ?? '', attempt: r.attempt }],
  );
}

function toEvent(report: TaskReport, verdict: ReportVerdict, worker: string): RunEvent | null {
  if (verdict.accepted) {
    if (report.outcome.kind === 'completed') {
      return {
        kind: 'node_completed',
        nodeId: verdict.nodeId,
        iteration: verdict.iteration,
        attempt: verdict.attempt,
      };
    }
    return {
      kind: 'node_failed',
      nodeId: verdict.nodeId,
      iteration: verdict.iteration,
      attempt: verdict.attempt,
      error: report.outcome.error,
    };
  }
  if (verdict.nodeId === undefined) return null;
  return {
    kind: 'report_refused',
    nodeId: verdict.nodeId,
    iteration: verdict.iteration ?? '',
    attempt: report.attempt,
    report: report.outcome.kind === 'completed' ? 'complete' : 'fail',
    why: verdict.why,
    worker,
  };
}
