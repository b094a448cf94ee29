import type { Mailbox } from '@weft/core';
import type { MailboxRow, MailboxStateKey } from '@weft/engine';
import type { Db } from '../db.js';

/** Signal mailboxes of runs the caller has locked; an empty mailbox has no row. */
export async function loadMailboxes(
  sql: Db,
  keys: readonly MailboxStateKey[],
): Promise<{ runId: string; mailbox: Mailbox }[]> {
  if (keys.length === 0) return [];
  const rows = await sql<
    {
      runId: string;
      name: string;
      correlation: string;
      buffered: Mailbox['buffered'];
      waiters: Mailbox['waiters'];
    }[]
  >`
    SELECT m.run_id, m.name, m.correlation, m.buffered, m.waiters
      FROM unnest(${keys.map((k) => k.runId)}::uuid[], ${keys.map((k) => k.name)}::text[], ${keys.map((k) => k.correlation)}::text[])
           AS k(run_id, name, correlation)
      JOIN weft.mailboxes m ON m.run_id = k.run_id AND m.name = k.name AND m.correlation = k.correlation`.execute();
  return rows.map((r) => ({
    runId: r.runId,
    mailbox: { name: r.name, correlation: r.correlation, buffered: r.buffered, waiters: r.waiters },
  }));
}

/**
 * Stores mailboxes as the decisions of a pass left them: upserts those with something in them, deletes
 * the emptied ones. The caller holds the runs' row locks, so no two transactions write one mailbox. Both
 * statements are sent before either is awaited (see db.ts).
 */
export async function writeMailboxes(sql: Db, rows: readonly MailboxRow[]): Promise<void> {
  if (rows.length === 0) return;
  const full = rows.filter((r) => r.mailbox.buffered.length > 0 || r.mailbox.waiters.length > 0);
  const empty = rows.filter((r) => r.mailbox.buffered.length === 0 && r.mailbox.waiters.length === 0);
  await Promise.all([
    full.length === 0
      ? null
      : sql`
    INSERT INTO weft.mailboxes AS m (run_id, name, correlation, buffered, waiters)
    SELECT run_id, name, correlation, buffered::jsonb, waiters::jsonb
      FROM unnest(${full.map((r) => r.runId)}::uuid[], ${full.map((r) => r.mailbox.name)}::text[],
                  ${full.map((r) => r.mailbox.correlation)}::text[], ${full.map((r) => JSON.stringify(r.mailbox.buffered))}::text[],
                  ${full.map((r) => JSON.stringify(r.mailbox.waiters))}::text[])
        AS u(run_id, name, correlation, buffered, waiters)
    ON CONFLICT (run_id, name, correlation)
       DO UPDATE SET buffered = EXCLUDED.buffered, waiters = EXCLUDED.waiters, updated_at = now()`.execute(),
    empty.length === 0
      ? null
      : sql`
    DELETE FROM weft.mailboxes m
     USING unnest(${empty.map((r) => r.runId)}::uuid[], ${empty.map((r) => r.mailbox.name)}::text[],
                  ${empty.map((r) => r.mailbox.correlation)}::text[]) AS d(run_id, name, correlation)
     WHERE m.run_id = d.run_id AND m.name = d.name AND m.correlation = d.correlation`.execute(),
  ]);
}
