import type { QueueRow } from '@weft/engine';
import type { Db } from '../db.js';

/** Puts tasks on the queue table, in the transaction that made them queued (no outbox needed). */
export async function enqueueTasks(sql: Db, rows: readonly QueueRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    INSERT INTO weft.queue (task_id, run_id, namespace, task_type, priority, available_at)
    SELECT task_id, run_id, namespace, task_type, priority, now() + delay_ms * interval '1 millisecond'
      FROM unnest(${rows.map((r) => r.taskId)}::uuid[], ${rows.map((r) => r.runId)}::uuid[], ${rows.map((r) => r.namespace)}::text[],
                  ${rows.map((r) => r.taskType)}::text[], ${rows.map((r) => r.priority)}::int[], ${rows.map((r) => r.delayMs)}::int[])
        AS q(task_id, run_id, namespace, task_type, priority, delay_ms)`.execute();
}
