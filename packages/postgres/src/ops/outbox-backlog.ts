import type { OutboxBacklog } from '@weft/engine';
import type { Db } from '../db.js';

/**
 * The outbox of a namespace per destination: waiting, retrying and dead messages, the oldest waiting one
 * and the latest error. Delivered messages are deleted, so this reads what is still there: a handful of
 * rows when deliveries keep up.
 */
export async function outboxBacklog(sql: Db, namespace: string): Promise<OutboxBacklog[]> {
  return sql<OutboxBacklog[]>`
    SELECT destination,
           count(*) FILTER (WHERE status = 'pending' AND attempts = 0)::int AS pending,
           count(*) FILTER (WHERE status = 'pending' AND attempts > 0)::int AS retrying,
           count(*) FILTER (WHERE status = 'dead')::int AS dead,
           min(created_at) FILTER (WHERE status = 'pending') AS oldest_at,
           min(next_attempt_at) FILTER (WHERE status = 'pending') AS next_attempt_at,
           (array_agg(last_error ORDER BY id DESC) FILTER (WHERE last_error IS NOT NULL))[1] AS last_error
      FROM weft.outbox WHERE namespace = ${namespace}
     GROUP BY destination ORDER BY destination`.execute();
}
