import { Engine, type PurgeSelection } from '@weft/engine';
import { armFault } from '@weft/engine/internal';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, failed } from '../helpers.js';

// Retention deletes finished runs while everything else goes on. A run it takes is locked first (FOR UPDATE
// SKIP LOCKED), and its status is checked under that lock (invariant 19): a run an operator is retrying (or
// any transaction is deciding) is left for a later round, never deleted under it, and never half deleted.

const FLOW = `
name: purge-race
nodes:
  - { id: a, task_type: purge.step, retry: { max_attempts: 1 } }
`;

/** Every table that holds rows of a run, by its run column. */
const RUN_TABLES = [
  ['runs', 'id'],
  ['tasks', 'run_id'],
  ['history', 'run_id'],
  ['inbox', 'run_id'],
  ['queue', 'run_id'],
  ['decide_queue', 'run_id'],
  ['timers', 'run_id'],
  ['outbox', 'run_id'],
] as const;

let db: TestDatabase;
let engine: Engine;
let operator: Engine;
let purger: PgStore;

beforeAll(async () => {
  db = await createTestDatabase();
  // Three sets of connections: the retry, the purge and the background decisions are separate transactions.
  engine = new Engine({
    store: new PgStore(db.pool(4)),
    config: { decidePollMs: 20, crossProcessWakeups: false },
  });
  operator = new Engine({
    store: new PgStore(db.pool(4)),
    config: { backgroundLoops: false, crossProcessWakeups: false },
  });
  purger = new PgStore(db.pool(4));
  await engine.start();
  await operator.start();
  await engine.definitions.deploy('default', FLOW);
});
afterAll(async () => {
  await engine?.stop();
  await operator?.stop();
  await purger?.sql.end();
  await db?.drop();
});

const everything = (): PurgeSelection => ({
  namespace: 'default',
  finishedBefore: new Date(Date.now() + 3_600_000),
  definition: 'purge-race',
});

/**
 * A run whose only task failed for good: finished, and retryable by an operator. Tasks of earlier runs that
 * were retried are failed again on the way.
 */
async function failedRun(): Promise<string> {
  const run = await engine.runs.start({ namespace: 'default', definition: 'purge-race', input: {} });
  await eventually(async () => {
    const tasks = await engine.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['purge.step'],
      max: 10,
      waitMs: 0,
    });
    if (tasks.length)
      await engine.tasks.report({
        namespace: 'default',
        worker: 'w',
        reports: tasks.map((t) => failed(t, 'no', false)),
      });
    return (await engine.context.store.getRun(run.id))?.status === 'failed' ? true : undefined;
  });
  return run.id;
}

/** Rows each run table holds for a run. */
async function rowsOf(runId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [table, column] of RUN_TABLES) {
    const [row] = await db.sql.unsafe(`SELECT count(*)::int AS n FROM weft.${table} WHERE ${column} = $1`, [
      runId,
    ]);
    out[table] = row!.n;
  }
  return out;
}

describe('a purge racing other transactions on the same run', () => {
  it("a purge racing an operator's retry never deletes the retried run, and never half of a run", async () => {
    for (let round = 0; round < 6; round++) {
      const runId = await failedRun();
      let retried: unknown;
      if (round % 2 === 0) {
        // The retry holds the run's lock (claim taken, decision not yet written) while the purge runs.
        const disarm = armFault('control.after-claim', () => new Promise((r) => setTimeout(r, 150)));
        try {
          const retry = operator.control.retry(runId, { by: 'ops' }).then(
            (r) => r,
            (e) => e,
          );
          await new Promise((r) => setTimeout(r, 50));
          const purged = await purger.retention.purge(everything(), 500);
          expect(purged).not.toContain(runId);
          retried = await retry;
        } finally {
          disarm();
        }
        expect((retried as { status?: string }).status).toBe('running');
        const rows = await rowsOf(runId);
        expect(rows.runs).toBe(1);
        const tasks =
          await db.sql`SELECT attempt, status FROM weft.tasks WHERE run_id = ${runId} ORDER BY attempt`;
        expect(tasks.map((t) => t.attempt)).toEqual([1, 2]);
      } else {
        // The purge holds the run's lock (between its lock and its delete) while the retry asks for it.
        let retry: Promise<unknown> | undefined;
        const purged = await purger.retention.purge(everything(), 500, async () => {
          retry = operator.control.retry(runId, { by: 'ops' }).then(
            (r) => r,
            (e) => e,
          );
          await new Promise((r) => setTimeout(r, 100));
        });
        expect(purged).toContain(runId);
        retried = await retry;
        expect((retried as { code?: string }).code).toBe('run_not_found');
        expect(Object.values(await rowsOf(runId)).every((n) => n === 0)).toBe(true);
      }
    }
  });

  it("a worker's late report racing the purge of its run is refused, and leaves nothing of the run behind", async () => {
    for (let round = 0; round < 4; round++) {
      const run = await engine.runs.start({ namespace: 'default', definition: 'purge-race', input: {} });
      const [task] = await eventually(async () => {
        const got = await engine.tasks.poll({
          namespace: 'default',
          worker: 'late',
          taskTypes: ['purge.step'],
          max: 10,
          waitMs: 0,
        });
        const mine = got.filter((t) => t.runId === run.id);
        const others = got.filter((t) => t.runId !== run.id);
        if (others.length)
          await engine.tasks.report({
            namespace: 'default',
            worker: 'late',
            reports: others.map((t) => failed(t, 'no', false)),
          });
        return mine.length ? mine : undefined;
      });
      // The run ends while its worker still holds the attempt; the worker reports late.
      await operator.control.cancel(run.id, { by: 'ops' });
      const report = () =>
        engine.tasks.report({
          namespace: 'default',
          worker: 'late',
          reports: [
            { ...failed(task!, 'late', false), outcome: { kind: 'completed', output: { late: true } } },
          ],
        });
      let verdicts: Awaited<ReturnType<typeof report>>['verdicts'] = [];
      if (round % 2 === 0) {
        // The report arrives while the purge holds the run (between its lock and its delete).
        let late: ReturnType<typeof report> | undefined;
        await purger.retention.purge(everything(), 500, async () => {
          late = report();
          await new Promise((r) => setTimeout(r, 100));
        });
        verdicts = (await late!).verdicts;
      } else {
        // The report arrives after the run is gone.
        await purger.retention.purge(everything(), 500);
        verdicts = (await report()).verdicts;
      }
      expect(verdicts[0]?.accepted).toBe(false);
      expect(Object.values(await rowsOf(run.id)).every((n) => n === 0)).toBe(true);
    }
  });

  it('two purgers at once take different runs and delete each run once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await failedRun());
    const other = new PgStore(db.pool(2));
    try {
      const drain = async (store: PgStore) => {
        const got: string[] = [];
        for (;;) {
          const batch = await store.retention.purge(everything(), 2);
          if (batch.length === 0) return got;
          got.push(...batch);
        }
      };
      const [a, b] = await Promise.all([drain(purger), drain(other)]);
      const all = [...a, ...b];
      expect(new Set(all).size).toBe(all.length);
      for (const id of ids) expect(all).toContain(id);
      for (const id of ids) expect((await rowsOf(id)).runs).toBe(0);
    } finally {
      await other.sql.end();
    }
  });
});
