import type { RepairCheck, RepairFilter, RepairRecord, RepairRow } from '@weft/engine';
import type { Db } from '../db.js';
import { jsonText } from '../db.js';

/**
 * Writes the audit rows of a sweeper pass, in its transaction, which holds the runs' locks and has not yet
 * written the repair's history: each row's last event and idle time are the run's as the sweeper found it,
 * and a repair and its row commit together (invariant 26; test "writes a row per repair with what was
 * found and what changed, then whether the run moved").
 */
export async function recordRepairs(sql: Db, rows: readonly RepairRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    INSERT INTO weft.sweeper_repairs
           (run_id, namespace, definition, status, idle_ms, last_event, changed, first_seq, last_seq)
    SELECT k.run_id, k.namespace, k.definition, k.status,
           (extract(epoch FROM now() - coalesce(h.at, r.created_at)) * 1000)::bigint,
           CASE WHEN h.seq IS NULL THEN NULL
                ELSE jsonb_build_object('seq', h.seq, 'type', h.type, 'nodeId', h.node_id, 'at', h.at) END,
           k.changed::jsonb, k.first_seq, k.last_seq
      FROM unnest(${rows.map((r) => r.runId)}::uuid[], ${rows.map((r) => r.namespace)}::text[],
                  ${rows.map((r) => r.definition)}::text[], ${rows.map((r) => r.status)}::text[],
                  ${rows.map((r) => jsonText(r.changed))}::text[], ${rows.map((r) => r.firstSeq)}::int[],
                  ${rows.map((r) => r.lastSeq)}::int[])
           AS k(run_id, namespace, definition, status, changed, first_seq, last_seq)
      JOIN weft.runs r ON r.id = k.run_id
      LEFT JOIN LATERAL (SELECT l.seq, l.type, l.node_id, l.at FROM weft.history l
                          WHERE l.run_id = k.run_id ORDER BY l.seq DESC LIMIT 1) h ON TRUE`.execute();
}

/**
 * Checks repairs made at least `afterMs` ago and not yet checked: the run moved if it has left the states
 * the sweeper repairs, written history past the repair, or waits on an attempt or a timer. Rows another
 * server is checking are skipped (SKIP LOCKED), and each row is checked once: the update sets `moved` only
 * where it is still unset, re-checked on the row (invariant 19; test "each repair is checked once, by one of
 * two racing checks").
 */
export async function checkRepairs(sql: Db, afterMs: number, limit: number): Promise<RepairCheck> {
  const rows = await sql<{ moved: boolean }[]>`
    WITH due AS (
      SELECT s.run_id, s.id FROM weft.sweeper_repairs s
       WHERE s.moved IS NULL AND s.repaired_at <= now() - ${afterMs}::bigint * interval '1 millisecond'
       ORDER BY s.repaired_at LIMIT ${limit}::int
         FOR UPDATE SKIP LOCKED
    )
    UPDATE weft.sweeper_repairs s
       SET checked_at = now(),
           moved = r.status NOT IN ('running', 'compensating')
                OR EXISTS (SELECT 1 FROM weft.history h WHERE h.run_id = s.run_id AND h.seq > s.last_seq)
                OR EXISTS (SELECT 1 FROM weft.tasks t WHERE t.run_id = s.run_id AND t.status IN ('queued', 'running'))
                OR EXISTS (SELECT 1 FROM weft.timers tm WHERE tm.run_id = s.run_id)
      FROM due d, weft.runs r
     WHERE s.run_id = d.run_id AND s.id = d.id AND r.id = s.run_id AND s.moved IS NULL
    RETURNING s.moved`.execute();
  const moved = rows.filter((r) => r.moved).length;
  return { moved, stuck: rows.length - moved };
}

/** A namespace's repairs, newest first (through `sweeper_repairs_by_namespace`). */
export async function listRepairs(sql: Db, filter: RepairFilter): Promise<RepairRecord[]> {
  const rows = await sql<(Omit<RepairRecord, 'idleMs' | 'id'> & { id: string; idleMs: string })[]>`
    SELECT s.id::text, s.run_id, s.namespace, s.definition, s.repaired_at, s.status, s.idle_ms::text,
           s.last_event, s.changed, s.first_seq, s.last_seq, s.moved, s.checked_at
      FROM weft.sweeper_repairs s
     WHERE s.namespace = ${filter.namespace}
       AND (${filter.runId ?? null}::uuid IS NULL OR s.run_id = ${filter.runId ?? null}::uuid)
       AND (${filter.moved ?? null}::boolean IS NULL OR s.moved = ${filter.moved ?? null}::boolean)
       AND (${filter.before ?? null}::bigint IS NULL OR s.id < ${filter.before ?? null}::bigint)
     ORDER BY s.id DESC LIMIT ${filter.limit}::int`.execute();
  return rows.map((r) => ({ ...r, idleMs: Number(r.idleMs) }));
}
