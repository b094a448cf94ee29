import { createTestDatabase, type TestDatabase } from '@weft/testing';
import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countMatchingRuns, listRuns } from '../dist/ops/run-list.js';
import { plantDefinition } from './planted.js';

// The runs list answers its first page by reading about a page of rows, whatever the filter, on a table of
// many finished runs: every filter combination is planned for what it filters on, time ranges are read
// from the start-time index, an id prefix as an id range, a key by key. Rows read are counted by
// PostgreSQL (pg_stat_get_xact_tuples_returned over the runs table and its indexes). A walk through the
// table, which the benchmark would show as a slow first page, reads thousands.

const RUNS = 20_000;
const DAY = 86_400_000;

let db: TestDatabase;
let sql: Sql;

beforeAll(async () => {
  db = await createTestDatabase();
  sql = db.pool(1) as Sql;
  const defs = [];
  for (const name of ['orders', 'payments', 'refunds', 'reports'])
    for (const version of [1, 2, 3])
      defs.push({ id: await plantDefinition(db.sql, `${name}-v${version}`), name, version });
  const now = Date.now();
  // A month of finished runs, ids carrying their start times; 6% failed, 1% terminated.
  await db.sql`
    WITH g AS (
      SELECT g, to_timestamp((${now}::bigint - 30::bigint * ${DAY}::bigint + g::bigint * 30 * ${DAY}::bigint / ${RUNS}::bigint) / 1000.0) AS at,
             md5(g::text) AS h FROM generate_series(0, ${RUNS - 1}::int) g
    ), d AS (
      SELECT * FROM unnest(${defs.map((d) => d.id)}::bigint[], ${defs.map((d) => d.name)}::text[],
                           ${defs.map((d) => d.version)}::int[]) WITH ORDINALITY AS d(id, name, version, n)
    ), r AS (
      INSERT INTO weft.runs (id, namespace, definition_id, definition_name, definition_version, status, input, created_at)
      SELECT (lpad(to_hex((extract(epoch FROM g.at) * 1000)::bigint), 12, '0') || '7' || substr(g.h, 1, 3) || '8'
                || substr(g.h, 4, 15))::uuid, 'default', d.id, d.name, d.version,
             CASE WHEN g.g % 100 < 93 THEN 'completed' WHEN g.g % 100 < 99 THEN 'failed' ELSE 'terminated' END,
             jsonb_build_object('n', g.g), g.at
        FROM g JOIN d ON d.n = 1 + (g.g % ${defs.length}::int)
      RETURNING id, definition_name, input
    )
    INSERT INTO weft.idempotency_keys (namespace, key, run_id, definition_name)
    SELECT 'default', 'key-' || (input->>'n'), id, definition_name FROM r WHERE (input->>'n')::int % 10 = 0`;
  // Search attributes: a customer holds a handful of runs (rare), one run in ten is a gold customer's.
  await db.sql`
    INSERT INTO weft.run_attributes (run_id, namespace, key, value)
    SELECT id, 'default', 'customer', to_jsonb((input->>'n')::int % 1000) FROM weft.runs
    UNION ALL
    SELECT id, 'default', 'tier', to_jsonb('gold'::text) FROM weft.runs WHERE (input->>'n')::int % 10 = 3`;
  await db.sql`ANALYZE weft.run_attributes`;
  await db.sql`ANALYZE weft.runs`;
  await db.sql`ANALYZE weft.idempotency_keys`;
}, 120_000);
afterAll(async () => {
  await sql?.end();
  await db?.drop();
});

async function rowsRead(tx: Sql): Promise<number> {
  const [row] = await tx<{ n: number }[]>`
    SELECT sum(pg_stat_get_xact_tuples_returned(c.oid))::int AS n
      FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
      LEFT JOIN pg_index i ON i.indexrelid = c.oid
     WHERE s.nspname = 'weft' AND coalesce(i.indrelid, c.oid) = 'weft.runs'::regclass`;
  return row?.n ?? 0;
}

/** Rows of `weft.runs` (table and indexes) one call reads, and what it found. */
async function reach(call: (tx: Sql) => Promise<number>): Promise<{ read: number; found: number }> {
  let out = { read: 0, found: 0 };
  await sql.begin(async (tx) => {
    const before = await rowsRead(tx as unknown as Sql);
    const found = await call(tx as unknown as Sql);
    out = { read: (await rowsRead(tx as unknown as Sql)) - before, found };
  });
  return out;
}

describe('the runs list on a table of many runs', () => {
  const at = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY);
  const cases: [string, object][] = [
    ['no filter', {}],
    ['status failed', { status: 'failed' }],
    ['status terminated', { status: 'terminated' }],
    ['definition', { definition: 'payments' }],
    ['definition and version', { definition: 'payments', version: 2 }],
    ['definition and status', { definition: 'payments', status: 'failed' }],
    ['started in the last day', { startedAfter: at(1) }],
    ['started before 15 days ago', { startedBefore: at(15) }],
    ['started within a day, 20 days ago', { startedAfter: at(21), startedBefore: at(20) }],
    ['failed, started before 15 days ago', { status: 'failed', startedBefore: at(15) }],
    ['run id prefix', { runId: '0' }],
    ['idempotency key', { idempotencyKey: 'key-10000' }],
    ['a rare search attribute', { attribute: { key: 'customer', value: '42' } }],
    ['a common search attribute', { attribute: { key: 'tier', value: 'gold' } }],
    [
      'a common search attribute and a status',
      { attribute: { key: 'tier', value: 'gold' }, status: 'failed' },
    ],
  ];

  it.each(cases)('first page, %s: reads about a page, not the table', async (_name, filter) => {
    // Twice: the second call runs the statement prepared by the first, as a busy server does.
    for (let i = 0; i < 2; i++) {
      const { read, found } = await reach(
        async (tx) => (await listRuns(tx, { namespace: 'default', limit: 50, ...filter })).items.length,
      );
      expect(found).toBeGreaterThan(0);
      expect(read).toBeLessThan(2_500);
    }
  });

  it('a next page by start time starts where the last ended', async () => {
    const first = await listRuns(sql, { namespace: 'default', limit: 50, startedBefore: at(15) });
    const { read, found } = await reach(
      async (tx) =>
        (await listRuns(tx, { namespace: 'default', limit: 50, startedBefore: at(15), cursor: first.next! }))
          .items.length,
    );
    expect(found).toBe(50);
    expect(read).toBeLessThan(500);
  });

  it('a count stops at its cap', async () => {
    const { read, found } = await reach((tx) => countMatchingRuns(tx, { namespace: 'default' }, 1000));
    expect(found).toBe(1000);
    expect(read).toBeLessThan(3_000);
  });
});
