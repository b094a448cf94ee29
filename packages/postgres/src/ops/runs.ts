import type { LockedRun, NewRun, RunCounts, RunRecord, RunUpdateRow } from '@weft/engine';
import type { Db } from '../db.js';
import { bools, jsonText } from '../db.js';

/** The columns of a run record (`r` is the runs table). */
export const RUN_COLUMNS = `r.id, r.namespace, r.definition_id::text, r.definition_name, r.definition_version, r.status,
  r.input, r.output, r.error, r.vars, r.sinks_done, r.created_at, r.finished_at, r.trace_context,
  jsonb_build_object('known', r.steps_known, 'completed', r.steps_completed, 'failed', r.steps_failed,
    'running', r.steps_running) AS progress,
  CASE WHEN r.parent_run_id IS NULL THEN NULL ELSE jsonb_build_object('runId', r.parent_run_id,
    'nodeId', r.parent_node_id, 'iteration', r.parent_iteration, 'attempt', r.parent_attempt,
    'detached', r.detached) END AS parent`;

/** A run's search attributes as one object (null when it has none), for the API's reads. */
export const ATTRIBUTES_COLUMN = `(SELECT jsonb_object_agg(a.key, a.value) FROM weft.run_attributes a
  WHERE a.run_id = r.id) AS attributes`;

/**
 * Inserts runs in status `running`; the inserting transaction holds their row locks until it commits.
 *
 * Two kinds of run are left out. A run with an idempotency key this transaction did not claim (another
 * start owns the key). And a run over its namespace's quota of running runs: the count is taken by this
 * statement, whose snapshot is taken after `lockQuotas` (sent just before it, in the same pipeline) holds
 * the namespace's quota lock. Namespaces without a quota row are not counted.
 *
 * The key is checked by a scalar subquery, one lookup per run: an `EXISTS` there may be planned as a hash
 * of the whole key table (test: "the statements of a step read the rows of their own runs").
 */
export async function insertRuns(sql: Db, runs: readonly NewRun[]): Promise<LockedRun[]> {
  if (runs.length === 0) return [];
  return sql<LockedRun[]>`
    WITH n AS (
      SELECT * FROM unnest(${runs.map((r) => r.id)}::uuid[], ${runs.map((r) => r.namespace)}::text[], ${runs.map((r) => r.definitionId)}::bigint[],
                  ${runs.map((r) => r.definitionName)}::text[], ${runs.map((r) => r.definitionVersion)}::int[],
                  ${runs.map((r) => jsonText(r.input) ?? 'null')}::text[], ${runs.map((r) => r.idempotencyKey ?? null)}::text[],
                  ${runs.map((r) => jsonText(r.attributes))}::text[], ${runs.map((r) => r.traceContext ?? null)}::text[])
        WITH ORDINALITY AS n(id, namespace, definition_id, definition_name, definition_version, input, key, attrs, trace_context, ord)
    ), keyed AS (
      SELECT n.* FROM n
       WHERE n.key IS NULL
          OR (SELECT k.run_id FROM weft.idempotency_keys k WHERE k.namespace = n.namespace AND k.key = n.key) = n.id
    ), room AS (
      SELECT l.namespace, l.max - (SELECT count(*) FROM weft.runs r
                                    WHERE r.namespace = l.namespace AND r.status IN ('running', 'paused', 'compensating')) AS free
        FROM (SELECT DISTINCT namespace FROM keyed) ns
        JOIN weft.limits l ON l.namespace = ns.namespace AND l.kind = 'quota' AND l.name = ''
    ), admitted AS (
      SELECT k.* FROM (SELECT keyed.*, row_number() OVER (PARTITION BY keyed.namespace ORDER BY keyed.ord) AS place FROM keyed) k
        LEFT JOIN room q ON q.namespace = k.namespace
       WHERE q.free IS NULL OR k.place <= q.free
    ), inserted AS (
      INSERT INTO weft.runs AS r (id, namespace, definition_id, definition_name, definition_version, status, input, trace_context)
      SELECT id, namespace, definition_id, definition_name, definition_version, 'running', input::jsonb, trace_context
        FROM admitted ORDER BY ord
      RETURNING ${sql.unsafe(RUN_COLUMNS)}, 0 AS last_seq, now() AS now
    ), attributes AS (
      -- Search attributes given at start, for the runs inserted (every admitted run is).
      INSERT INTO weft.run_attributes (run_id, namespace, key, value)
      SELECT a.id, a.namespace, e.key, e.value FROM admitted a, jsonb_each(a.attrs::jsonb) e WHERE a.attrs IS NOT NULL
    )
    SELECT * FROM inserted`.execute();
}

/**
 * Locks run rows in id order (so two lockers never deadlock on each other) and returns each with its last
 * history sequence number and the transaction's time.
 *
 * MAX(seq) is read by a second statement, after the lock is held. Read in the locking statement itself it
 * would come from that statement's snapshot, taken before the previous holder committed, and two
 * decisions would number their events the same (test: "history sequence under concurrent completions").
 * The second statement is pipelined, so it costs no extra round trip.
 */
export async function lockRuns(sql: Db, ids: readonly string[], mode: 'wait' | 'skip'): Promise<LockedRun[]> {
  if (ids.length === 0) return [];
  const sorted = [...new Set(ids)].sort();
  // Each run is locked by its own key lookup, in id order (the array is sorted; the lateral lookups run in
  // its order): joined plainly, a plan made while the table was small reads every run to lock a few
  // (test: "the statements of a step read the rows of their own runs").
  const locking = (
    mode === 'skip'
      ? sql<(Omit<LockedRun, 'lastSeq'> & { lastSeq?: number })[]>`
          SELECT ${sql.unsafe(RUN_COLUMNS)}, now() AS now
            FROM unnest(${sorted}::uuid[]) WITH ORDINALITY AS k(id, ord)
            CROSS JOIN LATERAL (SELECT * FROM weft.runs l WHERE l.id = k.id FOR UPDATE SKIP LOCKED) r
           ORDER BY k.ord`
      : sql<(Omit<LockedRun, 'lastSeq'> & { lastSeq?: number })[]>`
          SELECT ${sql.unsafe(RUN_COLUMNS)}, now() AS now
            FROM unnest(${sorted}::uuid[]) WITH ORDINALITY AS k(id, ord)
            CROSS JOIN LATERAL (SELECT * FROM weft.runs l WHERE l.id = k.id FOR UPDATE) r
           ORDER BY k.ord`
  ).execute();
  const seqs = sql<{ runId: string; lastSeq: number }[]>`
    SELECT id AS run_id, coalesce((SELECT max(h.seq) FROM weft.history h WHERE h.run_id = k.id), 0) AS last_seq
      FROM unnest(${sorted}::uuid[]) AS k(id)`.execute();
  const [rows, last] = await Promise.all([locking, seqs]);
  const byRun = new Map(last.map((r) => [r.runId, r.lastSeq]));
  return rows.map((r) => ({ ...r, lastSeq: byRun.get(r.id) ?? 0 }));
}

/**
 * Applies status, output, error and counter changes to runs the caller has locked. Each row is found by
 * its key and updated by the version found (its ctid), which the caller's lock keeps current: joined
 * plainly, a plan made while the table was small scans every run (test: "the statements of a step read
 * the rows of their own runs"). The ctid is safe here because that lock was taken by an earlier statement
 * (`lockRuns`), so this one's snapshot sees the version locked; a row locked by this statement itself is
 * matched by key instead (invariant 27).
 */
export async function updateRuns(sql: Db, rows: readonly RunUpdateRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    UPDATE weft.runs r SET
      status = coalesce(u.status, r.status),
      output = CASE WHEN u.set_output THEN u.output::jsonb ELSE r.output END,
      error = CASE WHEN u.set_error THEN u.error::jsonb ELSE r.error END,
      sinks_done = r.sinks_done + u.sinks_delta,
      vars = CASE WHEN u.vars IS NOT NULL THEN r.vars || u.vars::jsonb ELSE r.vars END,
      finished_at = CASE WHEN u.finished THEN now() WHEN u.reopened THEN NULL ELSE r.finished_at END,
      steps_running = CASE WHEN u.finished THEN 0 ELSE r.steps_running END
    FROM unnest(${rows.map((r) => r.runId)}::uuid[], ${rows.map((r) => r.status ?? null)}::text[],
                ${bools(rows.map((r) => r.output !== undefined))}::text[]::bool[], ${rows.map((r) => jsonText(r.output))}::text[],
                ${bools(rows.map((r) => r.error !== undefined))}::text[]::bool[], ${rows.map((r) => jsonText(r.error))}::text[],
                ${rows.map((r) => r.sinksDelta ?? 0)}::int[], ${bools(rows.map((r) => r.finished ?? false))}::text[]::bool[],
                ${bools(rows.map((r) => r.reopened ?? false))}::text[]::bool[],
                ${rows.map((r) => (r.vars ? JSON.stringify(r.vars) : null))}::text[])
         AS u(run_id, status, set_output, output, set_error, error, sinks_delta, finished, reopened, vars)
         CROSS JOIN LATERAL (SELECT l.ctid AS tid FROM weft.runs l WHERE l.id = u.run_id FOR UPDATE) x
    WHERE r.ctid = x.tid`.execute();
}

/** One run, or null. */
export async function getRun(sql: Db, id: string): Promise<RunRecord | null> {
  const [row] = await sql<
    RunRecord[]
  >`SELECT ${sql.unsafe(RUN_COLUMNS)}, ${sql.unsafe(ATTRIBUTES_COLUMN)} FROM weft.runs r WHERE r.id = ${id}::uuid`.execute();
  return row ?? null;
}

/** Those of these runs that exist, in one read. */
export async function getRuns(sql: Db, ids: readonly string[]): Promise<RunRecord[]> {
  if (ids.length === 0) return [];
  return await sql<RunRecord[]>`
    SELECT ${sql.unsafe(RUN_COLUMNS)}, ${sql.unsafe(ATTRIBUTES_COLUMN)}
      FROM unnest(${[...ids]}::uuid[]) AS k(id)
      CROSS JOIN LATERAL (SELECT * FROM weft.runs l WHERE l.id = k.id) r`.execute();
}

/** Runs by status, over a namespace or a given set of runs. */
export async function countRuns(sql: Db, namespace: string, ids?: readonly string[]): Promise<RunCounts> {
  const rows = ids
    ? await sql<{ status: string; n: number }[]>`
        SELECT status, count(*)::int AS n FROM weft.runs WHERE id = ANY(${[...ids]}::uuid[]) GROUP BY status`.execute()
    : await sql<{ status: string; n: number }[]>`
        SELECT status, count(*)::int AS n FROM weft.runs WHERE namespace = ${namespace} GROUP BY status`.execute();
  return Object.fromEntries(rows.map((r) => [r.status, r.n])) as RunCounts;
}
