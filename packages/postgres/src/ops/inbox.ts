import type { RunEvent } from '@weft/core';
import type { InboxItem } from '@weft/engine';
import type { Db } from '../db.js';

/** Pending events of the given runs, in arrival order per run. */
export async function readInbox(sql: Db, runIds: readonly string[]): Promise<InboxItem[]> {
  if (runIds.length === 0) return [];
  return sql<InboxItem[]>`
    SELECT i.id::text, i.run_id, i.event FROM unnest(${[...runIds]}::uuid[]) AS k(id)
      JOIN weft.inbox i ON i.run_id = k.id ORDER BY i.run_id, i.id`.execute();
}

/** Appends events to run inboxes. The caller also requests a decision for each run, in the same transaction. */
export async function appendInbox(
  sql: Db,
  items: readonly { runId: string; event: RunEvent }[],
): Promise<void> {
  if (items.length === 0) return;
  await sql`
    INSERT INTO weft.inbox (run_id, event)
    SELECT run_id, event::jsonb FROM unnest(${items.map((i) => i.runId)}::uuid[], ${items.map((i) => JSON.stringify(i.event))}::text[])
        AS t(run_id, event)`.execute();
}

/** Deletes consumed events. */
export async function deleteInbox(sql: Db, items: readonly { runId: string; id: string }[]): Promise<void> {
  if (items.length === 0) return;
  await sql`
    DELETE FROM weft.inbox i USING unnest(${items.map((i) => i.runId)}::uuid[], ${items.map((i) => i.id)}::bigint[]) AS d(run_id, id)
     WHERE i.run_id = d.run_id AND i.id = d.id`.execute();
}
