import type { HistoryRecord, HistoryRow } from '@weft/engine';
import type { Db } from '../db.js';
import { jsonText } from '../db.js';

/** Appends history events. The caller holds the runs' row locks and numbered the events from MAX(seq). */
export async function appendHistory(sql: Db, rows: readonly HistoryRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    INSERT INTO weft.history (run_id, seq, type, node_id, iteration, attempt, data)
    SELECT run_id, seq, type, node_id, iteration, attempt, data::jsonb
      FROM unnest(${rows.map((r) => r.runId)}::uuid[], ${rows.map((r) => r.seq)}::int[], ${rows.map((r) => r.type)}::text[],
                  ${rows.map((r) => r.nodeId)}::text[], ${rows.map((r) => r.iteration)}::text[], ${rows.map((r) => r.attempt)}::int[],
                  ${rows.map((r) => jsonText(r.data) ?? 'null')}::text[])
        AS h(run_id, seq, type, node_id, iteration, attempt, data)`.execute();
}

/** A page of a run's history after sequence number `afterSeq`. */
export async function readHistory(
  sql: Db,
  runId: string,
  afterSeq: number,
  limit: number,
): Promise<HistoryRecord[]> {
  return sql<HistoryRecord[]>`
    SELECT run_id, seq, type, node_id, iteration, attempt, data, at FROM weft.history
     WHERE run_id = ${runId}::uuid AND seq > ${afterSeq}::int ORDER BY seq LIMIT ${limit}::int`.execute();
}
