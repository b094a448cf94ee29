import type { WorkloadSnapshot } from '@weft/engine';
import type { Db } from '../db.js';

/**
 * What is waiting and running, for the metrics' gauges: one statement, read at scrape time (the server
 * caches it for a few seconds, so a storm of scrapes costs one read). Each part reads only rows that are
 * waiting or running, through the index that holds them: the queue (every row of it is waiting), running
 * attempts (`tasks_running_by_expiry`), outbox rows (pending and dead: delivered rows are deleted), open
 * human tasks (`human_tasks_open`), due timers (`timers_due`) and blobs listed for deletion. None of it reads finished work, so its
 * cost follows the backlog, not the history.
 */
export async function workload(sql: Db): Promise<WorkloadSnapshot> {
  const [row] = await sql<{ snapshot: WorkloadSnapshot }[]>`
    SELECT json_build_object(
      'queued', (SELECT coalesce(json_agg(q), '[]') FROM (
                   SELECT namespace, task_type AS "taskType", count(*)::int AS queued,
                          coalesce(extract(epoch FROM now() - min(available_at)), 0)::float8 AS "oldestAgeSeconds"
                     FROM weft.queue WHERE available_at <= now()
                    GROUP BY namespace, task_type) q),
      'running', (SELECT coalesce(json_agg(r), '[]') FROM (
                    SELECT task_type AS "taskType", count(*)::int AS count
                      FROM weft.tasks WHERE status = 'running' AND lease_token IS NOT NULL
                     GROUP BY task_type) r),
      'outbox', (SELECT coalesce(json_agg(o), '[]') FROM (
                   SELECT destination, count(*) FILTER (WHERE status = 'pending')::int AS pending,
                          count(*) FILTER (WHERE status = 'dead')::int AS dead
                     FROM weft.outbox GROUP BY destination) o),
      'humanTasksOpen', (SELECT coalesce(json_agg(h), '[]') FROM (
                           SELECT namespace, count(*)::int AS count
                             FROM weft.human_tasks WHERE state = 'open' GROUP BY namespace) h),
      'timersDue', (SELECT count(*)::int FROM weft.timers WHERE due_at <= now()),
      -- Drained by the blob deleter: its size is the backlog.
      'blobDeletions', (SELECT json_build_object('listed', count(*)::int,
                                                 'failing', count(*) FILTER (WHERE attempts > 0)::int)
                          FROM weft.blob_deletions)
    ) AS snapshot`.execute();
  return row!.snapshot;
}
