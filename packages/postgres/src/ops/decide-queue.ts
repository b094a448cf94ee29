import type { Db } from '../db.js';

/**
 * Claims pending decisions by deleting their rows. Call it after locking the runs and before reading any of
 * their state, in the transaction that decides: a rollback puts the rows back, and an event committed after
 * the claim inserts a fresh row and so earns its own pass (invariants 2 and 3). If a reporter holds a row
 * through its upsert, this DELETE waits for that reporter to commit, and the reads that follow see its change
 * (test: "decide queue interlock").
 */
export async function claimDecisions(sql: Db, runIds: readonly string[]): Promise<string[]> {
  if (runIds.length === 0) return [];
  // Rows are locked in run id order, as requestDecisions takes them: deleted in the order given, a claim
  // and a request sharing two runs deadlock (invariant 6; test "are taken in one order, so a claim given ids
  // in descending order never deadlocks a request"). Deleted by key, not by the version locked: a request
  // that committed while the lock waited made a version this statement's snapshot cannot see by ctid.
  const sorted = [...new Set(runIds)].sort();
  const rows = await sql<{ runId: string }[]>`
    DELETE FROM weft.decide_queue d
     WHERE d.run_id = ANY(ARRAY(SELECT q.run_id FROM weft.decide_queue q WHERE q.run_id = ANY(${sorted}::uuid[])
                                 ORDER BY q.run_id FOR UPDATE))
    RETURNING d.run_id`.execute();
  return rows.map((r) => r.runId);
}

/**
 * Asks for a decision on each run. ON CONFLICT DO UPDATE, not DO NOTHING: the update locks an existing row
 * until this transaction ends, so a decider's claim must wait until this change is visible. With DO NOTHING
 * the claim slips through, reads old state, and the wake-up is lost (test: "decide queue interlock").
 * Rows are taken in run id order so that two batches never deadlock on each other. Ids of runs that do
 * not exist are dropped.
 */
export async function requestDecisions(
  sql: Db,
  runIds: readonly string[],
  reason: string,
  delayMs = 0,
): Promise<void> {
  if (runIds.length === 0) return;
  const sorted = [...new Set(runIds)].sort();
  await sql`
    INSERT INTO weft.decide_queue AS d (run_id, reason, not_before)
    SELECT r.id, ${reason}, now() + ${delayMs}::int * interval '1 millisecond'
      FROM unnest(${sorted}::uuid[]) AS k(id) JOIN weft.runs r ON r.id = k.id ORDER BY r.id
    ON CONFLICT (run_id) DO UPDATE
       SET reason = EXCLUDED.reason,
           requested_at = now(),
           not_before = CASE WHEN d.failures > 0 THEN d.not_before ELSE least(d.not_before, EXCLUDED.not_before) END`.execute();
}

/** Puts a failed decision back with a backoff and the error that stopped it, visible to operators. */
export async function deferDecision(sql: Db, runId: string, error: string, delayMs: number): Promise<void> {
  await sql`
    INSERT INTO weft.decide_queue AS d (run_id, reason, not_before, failures, last_error)
    VALUES (${runId}::uuid, 'retry after error', now() + ${delayMs}::int * interval '1 millisecond', 1, ${error})
    ON CONFLICT (run_id) DO UPDATE
       SET not_before = EXCLUDED.not_before, failures = d.failures + 1, last_error = EXCLUDED.last_error`.execute();
}

/** Runs with a due decision, oldest first. Advisory: concurrent callers may get the same ids. */
export async function dueDecisions(sql: Db, limit: number): Promise<string[]> {
  const rows = await sql<{ runId: string }[]>`
    SELECT run_id FROM weft.decide_queue WHERE not_before <= now() ORDER BY not_before LIMIT ${limit}::int`.execute();
  return rows.map((r) => r.runId);
}
