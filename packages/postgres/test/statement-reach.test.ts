import { randomUUID } from 'node:crypto';
import { emptyWriteSet, type TaskReport } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plantDefinition, plantRun } from './planted.js';

// The statements of a step (report, decision reads, a poll, lease renewal, stopping a run, an outbox
// row tied to a task, an idempotent start) look rows up by key: they read the rows of the runs they act
// on, however many other runs, tasks and keys the tables hold. That has to hold on tables PostgreSQL has
// no statistics for yet (a new deployment, or a table that grew faster than autovacuum's ANALYZE), where
// the planner guesses selectivities, and on analysed tables. Rows read are counted by PostgreSQL itself
// (pg_stat_get_xact_tuples_returned, tables and their indexes).

const RUNS = 2000;
const TASKS_PER_RUN = 5;
/** Generous for a handful of key lookups; the table-wide scans this guards against read thousands. */
const MOST = 60;

let db: TestDatabase;
/** One connection: the statements it prepares while the tables are small are the ones measured later. */
let young: PgStore;
/** A connection opened once the tables are full, so it plans its statements on them. */
let grown: PgStore;
let definitionId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  young = new PgStore(db.pool(1));
  grown = new PgStore(db.pool(1));
  // No ANALYZE behind the tests' back: the first two check the planner's guesses, the last statistics.
  for (const table of ['runs', 'tasks', 'idempotency_keys', 'outbox', 'queue'])
    await db.sql.unsafe(`ALTER TABLE weft.${table} SET (autovacuum_enabled = false)`);
  definitionId = await plantDefinition(db.sql, 'reach');
});

/**
 * Finished runs, each with finished attempts and an idempotency key, and a backlog of queued work of
 * another task type: the bulk a step must not read.
 */
async function fillTables(runs: number, backlog = runs): Promise<void> {
  await db.sql`
    WITH r AS (
      INSERT INTO weft.runs (id, namespace, definition_id, definition_name, definition_version, status, input)
      SELECT gen_random_uuid(), 'default', ${definitionId}::bigint, 'reach', 1, 'completed', '{}'
        FROM generate_series(1, ${runs}::int) RETURNING id
    ), k AS (
      INSERT INTO weft.idempotency_keys (namespace, key, run_id, definition_name)
      SELECT 'default', 'key-' || r.id, r.id, 'reach' FROM r
    ), q AS (
      INSERT INTO weft.queue (task_id, run_id, namespace, task_type)
      SELECT gen_random_uuid(), r.id, 'default', 'backlog' FROM r LIMIT ${backlog}::int
    )
    INSERT INTO weft.tasks (run_id, id, node_id, attempt, status, task_type)
    SELECT r.id, gen_random_uuid(), 'n' || i, 1, 'completed', 'reach' FROM r, generate_series(1, ${TASKS_PER_RUN}::int) i`;
}
afterAll(async () => {
  await young?.close();
  await grown?.close();
  await db?.drop();
});

/**
 * A running run as a step finds it: one running attempt (leased), one waiting, and one queued for a
 * worker (the step's poll leases it).
 */
async function liveRun(): Promise<{ runId: string; taskId: string; token: string }> {
  const run = await plantRun(db.sql, { id: definitionId, name: 'reach' }, 'reach');
  const queuedId = randomUUID();
  await db.sql`
    INSERT INTO weft.tasks (run_id, id, node_id, attempt, status, task_type)
    VALUES (${run.runId}::uuid, ${queuedId}::uuid, 'c', 1, 'queued', 'reach')`;
  await db.sql`
    INSERT INTO weft.queue (task_id, run_id, namespace, task_type)
    VALUES (${queuedId}::uuid, ${run.runId}::uuid, 'default', 'reach')`;
  return run;
}

/**
 * Rows each of Weft's tables (with its indexes) has returned on this connection and not yet reported to
 * the statistics system. That includes the current transaction; on some versions earlier transactions of
 * the connection too, so a step's reads are the difference between two readings inside its transaction.
 */
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

/**
 * Runs the statements of one step on a live run, and of the run's end, in one transaction, and returns the
 * rows each table gave, with the run.
 */
async function oneStep(store: PgStore): Promise<{ read: Record<string, number>; runId: string }> {
  const { runId, taskId, token } = await liveRun();
  const report: TaskReport = {
    runId,
    taskId,
    attempt: 1,
    leaseToken: token,
    outcome: { kind: 'completed', output: null },
  };
  let read: Record<string, number> = {};
  await store.runInTransaction(async ({ tx, handle }) => {
    const before = await rowsRead(handle as Sql);
    await tx.lockRuns([runId], 'wait');
    await tx.claimDecisions([runId]);
    await tx.readInbox([runId]);
    await tx.loadTasks([{ runId, nodeId: 'b', iteration: '' }]);
    await tx.queuedPriorities('default', ['reach']);
    const leased = await tx.leaseTasks({
      namespace: 'default',
      taskTypes: ['reach'],
      max: 10,
      worker: 'w',
      leaseMs: 60_000,
    });
    expect(leased.tasks.map((t) => t.runId)).toEqual([runId]);
    await tx.renewLeases([{ runId, taskId, attempt: 1, leaseToken: token }], 60_000, 'default');
    const [verdict] = await tx.finishTasks([report], 'default');
    expect(verdict?.accepted).toBe(true);
    const keyed = randomUUID();
    await tx.claimIdempotencyKeys([
      { namespace: 'default', key: `key-${keyed}`, runId: keyed, definitionName: 'reach' },
    ]);
    const started = await tx.insertRuns([
      {
        id: keyed,
        namespace: 'default',
        definitionId,
        definitionName: 'reach',
        definitionVersion: 1,
        input: {},
        idempotencyKey: `key-${keyed}`,
      },
    ]);
    expect(started).toHaveLength(1);
    await tx.write(
      {
        ...emptyWriteSet(),
        outbox: [
          {
            runId,
            namespace: 'default',
            taskId,
            destination: 'reach',
            messageId: `m-${taskId}`,
            payload: { kind: 'wake_run', runId, reason: 'reach' },
          },
        ],
        stopChildren: [{ runId, reason: 'done', mode: 'cancel' }],
        cancelOpenWork: [{ runId, reason: 'done', mode: 'cancel' }],
        runUpdates: [{ runId, status: 'completed', output: null, finished: true }],
      },
      { commit: false },
    );
    const after = await rowsRead(handle as Sql);
    read = Object.fromEntries(Object.entries(after).map(([rel, n]) => [rel, n - (before[rel] ?? 0)]));
    // And the step did its work: the run ended, its waiting and just-leased attempts were cancelled.
    const [ended] = await (handle as Sql)<{ run: string; cancelled: number }[]>`
      SELECT (SELECT status FROM weft.runs WHERE id = ${runId}::uuid) AS run,
             (SELECT count(*)::int FROM weft.tasks WHERE run_id = ${runId}::uuid AND status = 'cancelled') AS cancelled`;
    expect(ended).toEqual({ run: 'completed', cancelled: 2 });
  });
  return { read, runId };
}

/** Tables that gave more rows than a step's own. */
const overReach = (read: Record<string, number>) => Object.entries(read).filter(([, n]) => n > MOST);

describe('the statements of a step read the rows of their own runs', () => {
  // Weft's connections keep generic plans, made on first use: a plan made on a young table stays until
  // the table is analysed (autovacuum does it once a table has grown by a tenth).
  it('on tables that were small when the statements were planned', async () => {
    await fillTables(RUNS / 5);
    await oneStep(young);
    await fillTables(RUNS);
    const { read } = await oneStep(young);
    // The count works: the step's own rows are read.
    expect(read['weft.runs']).toBeGreaterThan(0);
    expect(read['weft.tasks']).toBeGreaterThan(0);
    expect(overReach(read)).toEqual([]);
  });

  it('on full tables without statistics', async () => {
    const { read } = await oneStep(grown);
    expect(read['weft.tasks']).toBeGreaterThan(0);
    expect(overReach(read)).toEqual([]);
  });

  it('with a concurrency limit on the task type, whose poll takes the gated path', async () => {
    await db.sql`INSERT INTO weft.limits (namespace, kind, name, max) VALUES ('default', 'concurrency', 'reach', 100)`;
    try {
      for (const store of [young, grown]) {
        const { read, runId } = await oneStep(store);
        // The lease went through the gate: it recorded the slot it took.
        const [held] = await db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM weft.holds WHERE run_id = ${runId}::uuid`;
        expect(held!.n).toBe(1);
        expect(overReach(read)).toEqual([]);
      }
    } finally {
      await db.sql`DELETE FROM weft.limits WHERE namespace = 'default' AND name = 'reach'`;
    }
  });
  it('on analysed tables', async () => {
    await db.sql`ANALYZE weft.runs, weft.tasks, weft.idempotency_keys, weft.outbox, weft.queue`;
    for (const store of [young, grown]) {
      const { read } = await oneStep(store);
      expect(read['weft.tasks']).toBeGreaterThan(0);
      expect(overReach(read)).toEqual([]);
    }
  });
});
