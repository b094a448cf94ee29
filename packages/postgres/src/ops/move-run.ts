import type { RunMoveWrite } from '@weft/engine';
import type { Db } from '../db.js';

/**
 * Moves a locked run to another version of its definition: the run row, then every attempt of a renamed node,
 * then the arrivals and timers that name one, then the inbox events that name one, then the human tasks. The caller holds
 * the run's lock and has claimed its decision.
 *
 * The attempts are renamed before the inbox events (invariant 28; test "every report lands, on the kept and on
 * the renamed nodes, whichever commits first"). A worker's report locks its attempt, and when the run is
 * locked by the move it leaves its event in the inbox under the node id it read from the attempt. Renaming the
 * attempts waits for such a report to commit; the inbox statement starts after that, so it sees the event and
 * renames it. In the other order an event committed between the two statements keeps the old id, and the
 * next decision cannot find its node. A report that comes later waits for the move and reads the new id.
 */
export async function moveRun(sql: Db, move: RunMoveWrite): Promise<void> {
  const olds = Object.keys(move.renames);
  const news = olds.map((o) => move.renames[o]!);
  const map = JSON.stringify(move.renames);
  const statements = [
    sql`UPDATE weft.runs SET definition_id = ${move.definitionId}::bigint, definition_version = ${move.definitionVersion}
         WHERE id = ${move.runId}::uuid`.execute(),
  ];
  if (olds.length > 0) {
    statements.push(
      sql`UPDATE weft.tasks t SET node_id = m.new_id
            FROM unnest(${olds}::text[], ${news}::text[]) AS m(old_id, new_id)
           WHERE t.run_id = ${move.runId}::uuid AND t.node_id = m.old_id`.execute(),
      sql`UPDATE weft.tasks t
             SET arrivals = (SELECT jsonb_agg(CASE WHEN ${map}::text::jsonb ? (a->>'from')
                                                  THEN jsonb_set(a, '{from}', ${map}::text::jsonb -> (a->>'from'))
                                                  ELSE a END ORDER BY n)
                               FROM jsonb_array_elements(t.arrivals) WITH ORDINALITY AS x(a, n))
           WHERE t.run_id = ${move.runId}::uuid AND jsonb_typeof(t.arrivals) = 'array'
             AND EXISTS (SELECT 1 FROM jsonb_array_elements(t.arrivals) a WHERE ${map}::text::jsonb ? (a->>'from'))`.execute(),
      sql`UPDATE weft.timers m SET purpose = jsonb_set(m.purpose, '{nodeId}', ${map}::text::jsonb -> (m.purpose->>'nodeId'))
           WHERE m.run_id = ${move.runId}::uuid AND ${map}::text::jsonb ? (m.purpose->>'nodeId')`.execute(),
      sql`UPDATE weft.inbox i SET event = jsonb_set(i.event, '{nodeId}', ${map}::text::jsonb -> (i.event->>'nodeId'))
           WHERE i.run_id = ${move.runId}::uuid AND ${map}::text::jsonb ? (i.event->>'nodeId')`.execute(),
      sql`UPDATE weft.inbox i
             SET event = jsonb_set(i.event, '{purpose,nodeId}', ${map}::text::jsonb -> (i.event->'purpose'->>'nodeId'))
           WHERE i.run_id = ${move.runId}::uuid AND ${map}::text::jsonb ? (i.event->'purpose'->>'nodeId')`.execute(),
      sql`UPDATE weft.human_tasks h SET node_id = m.new_id
            FROM unnest(${olds}::text[], ${news}::text[]) AS m(old_id, new_id)
           WHERE h.run_id = ${move.runId}::uuid AND h.node_id = m.old_id`.execute(),
    );
  }
  await Promise.all(statements);
}
