import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plantDefinition, plantRun } from './planted.js';

// The metrics' workload statement runs on every scrape (cached a few seconds): it reads what waits and
// runs, never the finished work, however much of it the tables hold. Rows read are counted by PostgreSQL
// (pg_stat_get_xact_tuples_returned, tables and their indexes), as in statement-reach.test.ts.

const FINISHED_RUNS = 2000;
const LIVE_RUNS = 3;
/** Generous for the live rows; a scan of the finished work reads tens of thousands. */
const MOST = 100;

let db: TestDatabase;
let definitionId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  for (const table of ['runs', 'tasks', 'history', 'outbox', 'queue', 'timers', 'human_tasks'])
    await db.sql.unsafe(`ALTER TABLE weft.${table} SET (autovacuum_enabled = false)`);
  definitionId = await plantDefinition(db.sql, 'reach');
  await db.sql`
    WITH r AS (
      INSERT INTO weft.runs (id, namespace, definition_id, definition_name, definition_version, status, input)
      SELECT gen_random_uuid(), 'default', ${definitionId}::bigint, 'reach', 1, 'completed', '{}'
        FROM generate_series(1, ${FINISHED_RUNS}::int) RETURNING id
    ), h AS (
      INSERT INTO weft.history (run_id, seq, type, data)
      SELECT r.id, i, 'task.completed', '{}' FROM r, generate_series(1, 5) i
    ), answered AS (
      INSERT INTO weft.human_tasks (run_id, task_id, namespace, definition, node_id, attempt, title, state)
      SELECT r.id, gen_random_uuid(), 'default', 'reach', 'ask', 1, 'Answered', 'completed' FROM r
    )
    INSERT INTO weft.tasks (run_id, id, node_id, attempt, status, task_type)
    SELECT r.id, gen_random_uuid(), 'n' || i, 1, 'completed', 'reach' FROM r, generate_series(1, 5) i`;
  for (let i = 0; i < LIVE_RUNS; i++) {
    const live = await plantRun(db.sql, { id: definitionId, name: 'reach' }, 'reach');
    await db.sql`
      INSERT INTO weft.human_tasks (run_id, task_id, namespace, definition, node_id, attempt, title)
      VALUES (${live.runId}::uuid, gen_random_uuid(), 'default', 'reach', 'ask', 1, 'Open')`;
  }
});
afterAll(async () => {
  await db?.drop();
});

async function rowsRead(sql: Sql): Promise<Record<string, number>> {
  const rows = await sql<{ rel: string; n: number }[]>`
    SELECT coalesce(i.indrelid, c.oid)::regclass::text AS rel,
           sum(pg_stat_get_xact_tuples_returned(c.oid))::int AS n
      FROM pg_class c
      JOIN pg_namespace s ON s.oid = c.relnamespace
      LEFT JOIN pg_index i ON i.indexrelid = c.oid
     WHERE s.nspname = 'weft' AND c.relkind IN ('r', 'i')
     GROUP BY 1`;
  return Object.fromEntries(rows.map((r) => [r.rel, r.n]));
}

/** The workload read on one connection, in a transaction, with the rows each table gave. */
async function measured() {
  const pool = db.pool(1);
  try {
    return await pool.begin(async (tx) => {
      const sql = tx as unknown as Sql;
      const before = await rowsRead(sql);
      const snapshot = await new PgStore(sql).workload();
      const after = await rowsRead(sql);
      const read = Object.fromEntries(Object.entries(after).map(([rel, n]) => [rel, n - (before[rel] ?? 0)]));
      return { snapshot, read };
    });
  } finally {
    await pool.end();
  }
}

describe('the workload statement of the metrics', () => {
  for (const analysed of [false, true])
    it(`reads running attempts and open human tasks, not finished ones (${analysed ? 'analysed' : 'no statistics'})`, async () => {
      if (analysed)
        await db.sql`ANALYZE weft.runs, weft.tasks, weft.history, weft.queue, weft.timers, weft.human_tasks`;
      const { snapshot, read } = await measured();
      expect(snapshot.running).toEqual([{ taskType: 'reach', count: LIVE_RUNS }]);
      expect(snapshot.timersDue).toBe(0);
      expect(snapshot.humanTasksOpen).toEqual([{ namespace: 'default', count: LIVE_RUNS }]);
      // The count works: the live attempts were read.
      expect(read['weft.tasks']).toBeGreaterThanOrEqual(LIVE_RUNS);
      expect(Object.entries(read).filter(([, n]) => n > MOST)).toEqual([]);
    });
});
