import type { PurgeSelection } from '@weft/engine';
import type { Db } from '../db.js';

/** Where a blob reference sits in a stored value, at any depth (see `BLOB_REF`). */
const BLOB_PATH = '$.**."$weft_blob"';

/**
 * The runs a purge may take: finished runs of the selection, oldest finished first (index `runs_finished`),
 * less those something may still read or write:
 * - a child run whose parent is still live (running, paused or compensating): the parent waits on it;
 * - a run with a live attached child: the child's end is written to this run's inbox;
 *   (read run by run, through the run's own attempts: OFFSET 0 keeps the planner from scanning every
 *   attempt of every run for children instead);
 * - a run with a pending decision (a late event is decided first) or a pending outbox row (an effect not yet
 *   delivered, such as its parent's wake-up or its status callback: nothing is dropped, invariant 8).
 * Dead letters of the run are deleted with it.
 */
function purgeable(sql: Db, s: PurgeSelection) {
  return sql`r.namespace = ${s.namespace} AND r.finished_at IS NOT NULL
      AND r.finished_at < ${s.finishedBefore.toISOString()}::timestamptz
      AND r.status IN ('completed', 'failed', 'cancelled', 'terminated')
      ${s.definition === undefined ? sql`` : sql`AND r.definition_name = ${s.definition}`}
      ${s.exceptDefinitions?.length ? sql`AND r.definition_name <> ALL(${s.exceptDefinitions}::text[])` : sql``}
      AND NOT (r.parent_run_id IS NOT NULL AND NOT r.detached
               AND EXISTS (SELECT 1 FROM weft.runs p WHERE p.id = r.parent_run_id
                              AND p.status IN ('running', 'paused', 'compensating')))
      AND NOT EXISTS (SELECT 1 FROM (SELECT t.child_run_id FROM weft.tasks t
                                      WHERE t.run_id = r.id AND t.child_run_id IS NOT NULL OFFSET 0) t
                        JOIN weft.runs c ON c.id = t.child_run_id
                       WHERE NOT c.detached AND c.status IN ('running', 'paused', 'compensating'))
      AND NOT EXISTS (SELECT 1 FROM weft.decide_queue d WHERE d.run_id = r.id)
      AND NOT EXISTS (SELECT 1 FROM weft.outbox o WHERE o.run_id = r.id AND o.status = 'pending')`;
}

/** How many runs a purge would take now, counted up to `cap`. */
export async function countPurgeable(sql: Db, s: PurgeSelection, cap: number): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM (SELECT 1 FROM weft.runs r WHERE ${purgeable(sql, s)} LIMIT ${cap}::int) x`.execute();
  return row?.n ?? 0;
}

/**
 * Locks up to `limit` purgeable runs, skipping rows other transactions hold (`FOR UPDATE SKIP LOCKED`):
 * two servers purging at once take different runs, and a run being decided, acted on or signalled is left
 * for a later round. A run reopened meanwhile (an operator's retry) is re-checked under the lock and left
 * out, its status no longer final (invariant 19; test "a purge racing an operator's retry never deletes the
 * retried run, and never half of a run", purge-race.test.ts).
 */
export async function lockPurgeable(sql: Db, s: PurgeSelection, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    SELECT r.id FROM weft.runs r WHERE ${purgeable(sql, s)}
     ORDER BY r.finished_at LIMIT ${limit}::int
       FOR UPDATE OF r SKIP LOCKED`.execute();
  return rows.map((r) => r.id);
}

/**
 * Deletes runs the caller has locked with everything that belongs to them, in one statement: attempts,
 * history, inbox, queue rows, decision requests, timers, mailboxes, outbox rows (dead letters too), human
 * tasks, search attributes, the sweeper's audit of them, fork links, the runs' idempotency keys and the start
 * keys of the children they started (task logs go by the foreign key's cascade), and their blob references.
 * Every blob the rows referenced is listed in `blob_deletions` by the same statement, so the list commits
 * with the deletion.
 */
export async function deleteRuns(sql: Db, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const [row] = await sql<{ n: number }[]>`
    WITH ids AS (SELECT unnest(${ids}::uuid[]) AS id),
    t AS (DELETE FROM weft.tasks x USING ids WHERE x.run_id = ids.id RETURNING x.input, x.output),
    h AS (DELETE FROM weft.history x USING ids WHERE x.run_id = ids.id RETURNING x.data),
    i AS (DELETE FROM weft.inbox x USING ids WHERE x.run_id = ids.id RETURNING x.event),
    m AS (DELETE FROM weft.mailboxes x USING ids WHERE x.run_id = ids.id RETURNING x.buffered),
    ht AS (DELETE FROM weft.human_tasks x USING ids WHERE x.run_id = ids.id RETURNING x.data),
    q AS (DELETE FROM weft.queue x WHERE x.run_id = ANY(${ids}::uuid[])),
    dq AS (DELETE FROM weft.decide_queue x USING ids WHERE x.run_id = ids.id),
    tm AS (DELETE FROM weft.timers x USING ids WHERE x.run_id = ids.id),
    ob AS (DELETE FROM weft.outbox x USING ids WHERE x.run_id = ids.id),
    ik AS (DELETE FROM weft.idempotency_keys x USING ids WHERE x.run_id = ids.id),
    ra AS (DELETE FROM weft.run_attributes x USING ids WHERE x.run_id = ids.id),
    sr AS (DELETE FROM weft.sweeper_repairs x USING ids WHERE x.run_id = ids.id),
    -- A fork's link goes with either of its runs: a link to a run that no longer exists leads nowhere.
    rf AS (DELETE FROM weft.run_forks x WHERE x.run_id = ANY(${ids}::uuid[]) OR x.forked_from = ANY(${ids}::uuid[])),
    sk AS (DELETE FROM weft.start_keys x USING ids
            WHERE x.key >= ids.id::text || '/' AND x.key < ids.id::text || '0'),
    r AS (DELETE FROM weft.runs x USING ids WHERE x.id = ids.id RETURNING x.input, x.output),
    -- The runs' references go with them; the blobs they named are listed, and the deleter deletes those no
    -- other run references (invariant 30).
    br AS (DELETE FROM weft.blob_refs x USING ids WHERE x.run_id = ids.id RETURNING x.key),
    v AS (SELECT input AS v FROM t UNION ALL SELECT output FROM t UNION ALL SELECT data FROM h
          UNION ALL SELECT event FROM i UNION ALL SELECT buffered FROM m UNION ALL SELECT data FROM ht
          UNION ALL SELECT input FROM r UNION ALL SELECT output FROM r),
    b AS (INSERT INTO weft.blob_deletions (key)
          SELECT k.key #>> '{}' FROM v, jsonb_path_query(v.v, ${BLOB_PATH}::jsonpath) AS k(key)
           WHERE v.v IS NOT NULL AND jsonb_typeof(k.key) = 'string'
          UNION SELECT key FROM br
          -- In key order: two purges listing the same blobs lock their rows in one order.
          ORDER BY 1
          -- An update, not DO NOTHING: a listed row a blob deleter holds is waited for, and listed again if
          -- that deleter took it off the list (it saw these runs' references before this commits; invariant 30).
          ON CONFLICT (key) DO UPDATE SET listed_at = weft.blob_deletions.listed_at)
    SELECT count(*)::int AS n FROM r`.execute();
  return row?.n ?? 0;
}
