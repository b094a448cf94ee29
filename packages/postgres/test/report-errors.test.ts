import { Engine } from '@weft/engine';
import { connect, PgStore } from '@weft/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, type Harness, harness, lease } from './helpers.js';

// A report's transaction sends its statements in one pipeline: lock the runs, claim their decide-queue
// rows, apply the reports, read what the decision needs. When one fails (a deadlock, retried by the store;
// a lock timeout), PostgreSQL answers every later statement of the transaction with 25P02: none of their
// promises may be left rejecting with nobody awaiting them, or the server process sees unhandled rejections.

/** Runs `act`, and returns the rejections nobody handled meanwhile. */
async function unhandledDuring(act: () => Promise<void>): Promise<unknown[]> {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    await act();
    // Node reports a rejection nobody handled once the microtasks of the current turn have run.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
  return unhandled;
}

let h: Harness;
beforeAll(async () => {
  // No background loops: the report is the only transaction that touches the decide queue.
  h = await harness({ backgroundLoops: false });
  await h.engine.definitions.deploy(
    'default',
    'name: report-errors\nnodes:\n  - { id: a, task_type: report_errors.t }\n',
  );
});
afterAll(async () => {
  await h?.db.sql.unsafe('DROP TRIGGER IF EXISTS planted_failure ON weft.decide_queue');
  await h?.close();
});

describe('a report whose transaction fails', () => {
  it('fails with the first error and leaves no rejection unhandled (the claim fails)', async () => {
    await h.engine.runs.start({ namespace: 'default', definition: 'report-errors', input: {} });
    const [task] = await lease(h.engine, ['report_errors.t']);
    expect(task).toBeDefined();
    // The claim of the decide-queue rows fails, as a deadlock would make it.
    await h.db.sql.unsafe(`
      CREATE OR REPLACE FUNCTION weft.planted_failure() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'planted claim failure'; END $$`);
    await h.db.sql.unsafe(`
      CREATE TRIGGER planted_failure BEFORE DELETE ON weft.decide_queue
        FOR EACH STATEMENT EXECUTE FUNCTION weft.planted_failure()`);
    try {
      const unhandled = await unhandledDuring(async () => {
        await expect(
          h.engine.tasks.report({ namespace: 'default', worker: 'test-worker', reports: [completed(task!)] }),
        ).rejects.toThrow(/planted claim failure/);
      });
      expect(unhandled).toEqual([]);
    } finally {
      await h.db.sql.unsafe('DROP TRIGGER planted_failure ON weft.decide_queue');
    }
    // Nothing was half-applied: the attempt still runs, and a report now lands.
    const again = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'test-worker',
      reports: [completed(task!)],
    });
    expect(again.verdicts.map((v) => v.accepted)).toEqual([true]);
  });

  it('leaves no rejection unhandled when locking the run times out', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'report-errors', input: {} });
    const [task] = await lease(h.engine, ['report_errors.t']);
    // A second engine whose connections give up on a lock after 200 ms; it has not seen the run, so the
    // report's reads wait for the lock and only the claim and the report itself are on their way.
    await h.db.sql.unsafe(`ALTER DATABASE ${h.db.name} SET lock_timeout = '200ms'`);
    const pool = connect(h.db.url, { max: 2 });
    const other = new Engine({ store: new PgStore(pool), config: { backgroundLoops: false } });
    try {
      await h.db.sql.begin(async (tx) => {
        await tx`SELECT 1 FROM weft.runs WHERE id = ${run.id}::uuid FOR UPDATE`;
        const unhandled = await unhandledDuring(async () => {
          await expect(
            other.tasks.report({ namespace: 'default', worker: 'test-worker', reports: [completed(task!)] }),
          ).rejects.toThrow(/lock timeout/);
        });
        expect(unhandled).toEqual([]);
      });
    } finally {
      await pool.end();
      await h.db.sql.unsafe(`ALTER DATABASE ${h.db.name} RESET lock_timeout`);
    }
    const again = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'test-worker',
      reports: [completed(task!)],
    });
    expect(again.verdicts.map((v) => v.accepted)).toEqual([true]);
  });
});
