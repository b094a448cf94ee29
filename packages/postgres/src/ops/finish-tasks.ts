import { explainRefusal, type ReportedTask, type ReportVerdict, type TaskReport } from '@weft/engine';
import type { Db } from '../db.js';
import { jsonText } from '../db.js';

/**
 * Applies workers' reports. A report lands only if its attempt and lease token match the task and the task is
 * still running (invariants 13 and 14): a finished task stays finished even if a late report carries the
 * right token (test: "refuses a report after the attempt timed out, even with the right token and attempt").
 * A report past the attempt's deadline is refused too. Refused reports come back with the reason, for the
 * run's history.
 *
 * `attempt + 0` and `coalesce(status, '')` are the same tests, written so the planner cannot use them to
 * pick an index: left plain, it reads the partial index of running tasks (whose estimate is small and
 * stale) or the identity index by (run, attempt), and joins every running task of those runs against the
 * batch. Written this way, each report is one primary-key lookup. The namespace is checked by a scalar
 * subquery, evaluated per report: an `EXISTS` there may be planned as a hash of every run of the
 * namespace, built on each report (test: "the statements of a step read the rows of their own runs").
 */
export async function finishTasks(
  sql: Db,
  reports: readonly TaskReport[],
  namespace?: string,
): Promise<ReportVerdict[]> {
  if (reports.length === 0) return [];
  const accepted = await sql<
    {
      id: string;
      nodeId: string;
      iteration: string;
      attempt: number;
      leaseToken: string;
      taskType: string | null;
      ranSeconds: number;
    }[]
  >`
    UPDATE weft.tasks t SET status = r.status, output = r.output::jsonb, error = r.error::jsonb, finished_at = now()
      FROM unnest(${reports.map((r) => r.runId)}::uuid[], ${reports.map((r) => r.taskId)}::uuid[],
                  ${reports.map((r) => r.attempt)}::int[], ${reports.map((r) => r.leaseToken)}::uuid[],
                  ${reports.map((r) => (r.outcome.kind === 'completed' ? 'completed' : 'failed'))}::text[],
                  ${reports.map((r) => (r.outcome.kind === 'completed' ? jsonText(r.outcome.output) : null))}::text[],
                  ${reports.map((r) => (r.outcome.kind === 'failed' ? jsonText(r.outcome.error) : null))}::text[])
           AS r(run_id, id, attempt, token, status, output, error)
     WHERE t.run_id = r.run_id AND t.id = r.id AND t.attempt + 0 = r.attempt AND t.lease_token = r.token
       AND coalesce(t.status, '') = 'running' AND (t.deadline_at IS NULL OR t.deadline_at > now())
       AND (${namespace ?? null}::text IS NULL
            OR (SELECT n.namespace FROM weft.runs n WHERE n.id = t.run_id) = ${namespace ?? null}::text)
    RETURNING t.id, t.node_id, t.iteration, t.attempt, t.lease_token::text, t.task_type,
              extract(epoch FROM now() - t.started_at)::float8 AS ran_seconds`.execute();
  // By attempt and token, not task alone: of two reports on one task in a batch (a stale lease's and the
  // current one's), only the one that landed is accepted (conformance test: "in one batch, a stale report and
  // the holder’s on the same task get their own verdicts").
  const landed = (r: Pick<TaskReport, 'taskId' | 'attempt' | 'leaseToken'>) =>
    `${r.taskId}/${r.attempt}/${r.leaseToken}`.toLowerCase();
  const byId = new Map(accepted.map((a) => [landed({ ...a, taskId: a.id }), a]));
  const refused = reports.filter((r) => !byId.has(landed(r)));
  const why =
    refused.length > 0 ? await explainRefusals(sql, refused, namespace) : new Map<string, ReportVerdict>();
  return reports.map((r): ReportVerdict => {
    const ok = byId.get(landed(r));
    if (ok)
      return {
        taskId: r.taskId,
        accepted: true,
        nodeId: ok.nodeId,
        iteration: ok.iteration,
        attempt: ok.attempt,
        taskType: ok.taskType,
        ranSeconds: ok.ranSeconds,
      };
    return why.get(r.taskId) ?? { taskId: r.taskId, accepted: false, why: 'no such task' };
  });
}

/** Says why each refused report was refused, from the task as it is now (see `explainRefusal`). */
export async function explainRefusals(
  sql: Db,
  reports: readonly Pick<TaskReport, 'runId' | 'taskId' | 'attempt' | 'leaseToken'>[],
  namespace?: string,
): Promise<Map<string, ReportVerdict>> {
  const rows = await sql<ReportedTask[]>`
    SELECT t.id, t.node_id, t.iteration, t.attempt, t.status, t.lease_token::text,
           coalesce(t.deadline_at <= now(), false) AS past_deadline,
           (SELECT r.namespace FROM weft.runs r WHERE r.id = t.run_id) AS namespace,
           (SELECT max(l.attempt) FROM weft.tasks l
             WHERE l.run_id = t.run_id AND l.node_id = t.node_id AND l.iteration = t.iteration) AS latest
      FROM weft.tasks t
      JOIN unnest(${reports.map((r) => r.runId)}::uuid[], ${reports.map((r) => r.taskId)}::uuid[]) AS k(run_id, id)
        ON t.run_id = k.run_id AND t.id = k.id`.execute();
  const now = new Map(rows.map((r) => [r.id, r]));
  const out = new Map<string, ReportVerdict>();
  for (const report of reports)
    out.set(report.taskId, explainRefusal(report, now.get(report.taskId) ?? null, namespace));
  return out;
}
