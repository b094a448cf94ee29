import { type HistoryRecord, type HistoryRow, progressDeltas } from '@weft/engine';
import type { Db } from '../db.js';
import { jsonText } from '../db.js';

/**
 * Appends history events, and counts the progress they make on their runs' rows (`progressDeltas`) in the
 * same statement: the counts change in the transaction of the change they count, and a report costs no
 * statement more for them (test: "a report and the decision it brings take as many statements as without
 * progress counts"). The caller holds the runs' row locks and numbered the events from MAX(seq). A run
 * that has finished (its finish written earlier in this transaction) has nothing running.
 */
export async function appendHistory(sql: Db, rows: readonly HistoryRow[]): Promise<void> {
  if (rows.length === 0) return;
  const deltas = progressDeltas(rows);
  if (deltas.length === 0) {
    await sql`
      INSERT INTO weft.history (run_id, seq, type, node_id, iteration, attempt, data)
      SELECT run_id, seq, type, node_id, iteration, attempt, data::jsonb
        FROM unnest(${rows.map((r) => r.runId)}::uuid[], ${rows.map((r) => r.seq)}::int[], ${rows.map((r) => r.type)}::text[],
                    ${rows.map((r) => r.nodeId)}::text[], ${rows.map((r) => r.iteration)}::text[], ${rows.map((r) => r.attempt)}::int[],
                    ${rows.map((r) => jsonText(r.data) ?? 'null')}::text[])
          AS h(run_id, seq, type, node_id, iteration, attempt, data)`.execute();
    return;
  }
  await sql`
    WITH appended AS (
      INSERT INTO weft.history (run_id, seq, type, node_id, iteration, attempt, data)
      SELECT run_id, seq, type, node_id, iteration, attempt, data::jsonb
        FROM unnest(${rows.map((r) => r.runId)}::uuid[], ${rows.map((r) => r.seq)}::int[], ${rows.map((r) => r.type)}::text[],
                    ${rows.map((r) => r.nodeId)}::text[], ${rows.map((r) => r.iteration)}::text[], ${rows.map((r) => r.attempt)}::int[],
                    ${rows.map((r) => jsonText(r.data) ?? 'null')}::text[])
          AS h(run_id, seq, type, node_id, iteration, attempt, data)
    )
    UPDATE weft.runs r SET
      steps_known = r.steps_known + d.known,
      steps_completed = r.steps_completed + d.completed,
      steps_failed = r.steps_failed + d.failed,
      steps_running = CASE WHEN r.finished_at IS NULL THEN greatest(0, r.steps_running + d.running) ELSE 0 END
      FROM unnest(${deltas.map((d) => d.runId)}::uuid[], ${deltas.map((d) => d.known)}::int[],
                  ${deltas.map((d) => d.completed)}::int[], ${deltas.map((d) => d.failed)}::int[],
                  ${deltas.map((d) => d.running)}::int[]) AS d(run_id, known, completed, failed, running)
     WHERE r.id = d.run_id`.execute();
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
