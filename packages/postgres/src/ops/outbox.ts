import type {
  DeadLetterFilter,
  OutboxOutcome,
  OutboxRetryPolicy,
  OutboxRow,
  OutboxWrite,
  Page,
  ReplaySelection,
} from '@weft/engine';
import type { Db } from '../db.js';
import { bools } from '../db.js';

const COLUMNS = `run_id, id::text, namespace, task_id, destination, message_id, payload, status, attempts,
  next_attempt_at, last_error, created_at, dead_at`;

/**
 * Writes outbox rows in the transaction of the change they describe. A row tied to a task is written
 * only if that task row exists: the statement runs after the pass's task inserts on the same connection,
 * so an insert absorbed as a duplicate takes its effects with it (no second child start, no second
 * message for one attempt).
 * The task is looked up by a scalar subquery, one key lookup per row: an `EXISTS` there may be planned
 * as a hash of the whole task table (test: "the statements of a step read the rows of their own runs").
 */
export async function insertOutbox(sql: Db, rows: readonly OutboxWrite[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    INSERT INTO weft.outbox (run_id, namespace, task_id, destination, kind, message_id, payload)
    SELECT o.run_id, o.namespace, o.task_id, o.destination, o.kind, o.message_id, o.payload::jsonb
      FROM unnest(${rows.map((r) => r.runId)}::uuid[], ${rows.map((r) => r.namespace)}::text[],
                  ${rows.map((r) => r.taskId)}::uuid[], ${rows.map((r) => r.destination)}::text[],
                  ${rows.map((r) => r.payload.kind)}::text[], ${rows.map((r) => r.messageId)}::text[],
                  ${rows.map((r) => JSON.stringify(r.payload))}::text[])
        AS o(run_id, namespace, task_id, destination, kind, message_id, payload)
     WHERE o.task_id IS NULL
        OR (SELECT t.id FROM weft.tasks t WHERE t.run_id = o.run_id AND t.id = o.task_id) IS NOT NULL`.execute();
}

/**
 * Destinations with rows due now. A loose index scan over the pending rows' destinations (one index
 * probe per destination), so a destination with a large backlog does not hide the others. Advisory.
 */
export async function outboxDestinations(sql: Db): Promise<string[]> {
  const rows = await sql<{ destination: string }[]>`
    WITH RECURSIVE d AS (
      (SELECT destination FROM weft.outbox WHERE status = 'pending' ORDER BY destination LIMIT 1)
      UNION ALL
      SELECT (SELECT o.destination FROM weft.outbox o
               WHERE o.status = 'pending' AND o.destination > d.destination ORDER BY o.destination LIMIT 1)
        FROM d WHERE d.destination IS NOT NULL
    )
    SELECT d.destination FROM d
     WHERE d.destination IS NOT NULL
       AND EXISTS (SELECT 1 FROM weft.outbox o
                    WHERE o.status = 'pending' AND o.destination = d.destination AND o.next_attempt_at <= now())`.execute();
  return rows.map((r) => r.destination);
}

/**
 * Claims due rows of one destination for the calling transaction. FOR UPDATE SKIP LOCKED: concurrent
 * relays never wait for each other and never take the same row; the row lock is held until the
 * transaction that delivers and marks the row ends (test: "two relays deliver each row once").
 */
export async function claimOutbox(sql: Db, destination: string, limit: number): Promise<OutboxRow[]> {
  return sql<OutboxRow[]>`
    SELECT ${sql.unsafe(COLUMNS)} FROM weft.outbox
     WHERE status = 'pending' AND destination = ${destination} AND next_attempt_at <= now()
     ORDER BY next_attempt_at, id LIMIT ${limit}::int
       FOR UPDATE SKIP LOCKED`.execute();
}

/**
 * Marks delivered rows (deleted), rows to deliver again later (`repeat`), and failed ones: each failure backs off exponentially, per row, and a
 * row that has failed `maxAttempts` times (or failed permanently) becomes a dead letter, which leaves the
 * due index and is kept until replayed. Rows already settled elsewhere are left alone.
 */
export async function settleOutbox(
  sql: Db,
  outcomes: readonly OutboxOutcome[],
  policy: OutboxRetryPolicy,
): Promise<void> {
  const done = outcomes.filter((o) => o.delivery.kind === 'delivered');
  const repeat = outcomes.flatMap((o) =>
    o.delivery.kind === 'repeat' ? [{ ...o, afterMs: o.delivery.afterMs }] : [],
  );
  const failed = outcomes.flatMap((o) =>
    o.delivery.kind === 'failed' ? [{ ...o, delivery: o.delivery }] : [],
  );
  const statements: Promise<unknown>[] = [];
  if (done.length > 0) {
    statements.push(
      sql`
      DELETE FROM weft.outbox o
       USING unnest(${done.map((o) => o.runId)}::uuid[], ${done.map((o) => o.id)}::bigint[]) AS k(run_id, id)
       WHERE o.run_id = k.run_id AND o.id = k.id AND o.status = 'pending'`.execute(),
    );
  }
  if (repeat.length > 0) {
    statements.push(sql`
      UPDATE weft.outbox o SET next_attempt_at = now() + r.after_ms * interval '1 millisecond', last_error = NULL
        FROM unnest(${repeat.map((o) => o.runId)}::uuid[], ${repeat.map((o) => o.id)}::bigint[],
                    ${repeat.map((o) => o.afterMs)}::int[]) AS r(run_id, id, after_ms)
       WHERE o.run_id = r.run_id AND o.id = r.id AND o.status = 'pending'`);
  }
  if (failed.length > 0) {
    statements.push(
      sql`
      UPDATE weft.outbox o SET
        attempts = o.attempts + 1,
        last_error = f.error,
        status = CASE WHEN f.permanent OR o.attempts + 1 >= ${policy.maxAttempts}::int THEN 'dead' ELSE 'pending' END,
        dead_at = CASE WHEN f.permanent OR o.attempts + 1 >= ${policy.maxAttempts}::int THEN now() END,
        next_attempt_at = now() + least(${policy.baseDelayMs}::float8 * power(2, least(o.attempts, 40)),
                                        ${policy.maxDelayMs}::float8) * interval '1 millisecond'
      FROM unnest(${failed.map((o) => o.runId)}::uuid[], ${failed.map((o) => o.id)}::bigint[],
                  ${failed.map((o) => o.delivery.error.slice(0, 4000))}::text[],
                  ${bools(failed.map((o) => o.delivery.permanent ?? false))}::text[]::bool[])
        AS f(run_id, id, error, permanent)
      WHERE o.run_id = f.run_id AND o.id = f.id AND o.status = 'pending'`.execute(),
    );
  }
  await Promise.all(statements);
}

/** Dead letters, newest first; the cursor is the last id of the page. */
export async function listDeadLetters(sql: Db, filter: DeadLetterFilter): Promise<Page<OutboxRow>> {
  const before = filter.cursor ?? '9223372036854775807';
  const rows = await sql<OutboxRow[]>`
    SELECT ${sql.unsafe(COLUMNS)} FROM weft.outbox
     WHERE status = 'dead' AND namespace = ${filter.namespace} AND id < ${before}::bigint
       AND (${filter.destination ?? null}::text IS NULL OR destination = ${filter.destination ?? null}::text)
     ORDER BY id DESC LIMIT ${filter.limit + 1}::int`.execute();
  const items = rows.slice(0, filter.limit);
  return { items, next: rows.length > filter.limit ? items[items.length - 1]!.id : null };
}

/** Puts dead letters back in line for delivery, attempts reset; their last error is kept. */
export async function replayDeadLetters(sql: Db, selection: ReplaySelection): Promise<number> {
  const ids = selection.ids ? [...selection.ids] : null;
  const rows = await sql<{ id: string }[]>`
    UPDATE weft.outbox SET status = 'pending', attempts = 0, next_attempt_at = now(), dead_at = NULL
     WHERE status = 'dead' AND namespace = ${selection.namespace}
       AND (${ids}::bigint[] IS NULL OR id IN (SELECT unnest(${ids}::bigint[])))
       AND (${selection.destination ?? null}::text IS NULL OR destination = ${selection.destination ?? null}::text)
    RETURNING id::text`.execute();
  return rows.length;
}
