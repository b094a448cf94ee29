import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine, FolderBlobStore } from '@weft/engine';
import { armFault } from '@weft/engine/internal';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { type DispatcherFixture, dispatcherConformance } from '@weft/testing/conformance';
import PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgBossConsumer, PgBossDispatcher } from '../src/index.js';

// The pg-boss dispatcher against real PostgreSQL: pg-boss in the same database as PgStore, joining its
// transactions; and, with shareTransactions false, enqueueing after commit like a queue elsewhere would.

async function startBoss(db: TestDatabase): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: db.url, max: 4, schedule: false, supervise: false });
  boss.on('error', () => {});
  await boss.start();
  return boss;
}

function fixture(shareTransactions: boolean) {
  return async (): Promise<DispatcherFixture> => {
    const db = await createTestDatabase();
    const boss = await startBoss(db);
    const dispatcher = new PgBossDispatcher({ boss, shareTransactions });
    return {
      store: new PgStore(db.pool(10)),
      dispatcher,
      consume(engine, taskTypes, handler) {
        const consumer = new PgBossConsumer({
          boss,
          dispatcher,
          tasks: engine.tasks,
          namespace: 'default',
          handlers: Object.fromEntries(taskTypes.map((t) => [t, handler])),
        });
        const started = consumer.start();
        return async () => {
          await started;
          await consumer.stop();
        };
      },
      async pending() {
        const [row] = await db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM pgboss.job WHERE name LIKE 'weft.%' AND state IN ('created', 'retry')`;
        return row!.n;
      },
      duplicate: (task) => dispatcher.enqueue([task]),
      async close() {
        await boss.stop({ graceful: false, wait: true, timeout: 2000 });
        await db.drop();
      },
    };
  };
}

dispatcherConformance('pg-boss (joins the store transaction)', fixture(true));
dispatcherConformance('pg-boss (enqueues after commit)', fixture(false));

describe('pg-boss in the store transaction', () => {
  let db: TestDatabase;
  let boss: PgBoss;
  let engine: Engine;

  beforeAll(async () => {
    db = await createTestDatabase();
    boss = await startBoss(db);
    engine = new Engine({
      store: new PgStore(db.pool(5)),
      dispatcher: new PgBossDispatcher({ boss }),
      blobs: new FolderBlobStore(mkdtempSync(join(tmpdir(), 'weft-pgboss-'))),
      config: { backgroundLoops: false, crossProcessWakeups: false, systemTasks: false },
    });
    await engine.start();
    await engine.definitions.deploy('default', 'name: one\nnodes:\n  - { id: a, task_type: pb.work }\n');
  });
  afterAll(async () => {
    await engine?.stop();
    await boss?.stop({ graceful: false, wait: true, timeout: 2000 });
    await db?.drop();
  });

  const jobs = () => db.sql<{ taskId: string; attempt: number; state: string }[]>`
    SELECT data->>'taskId' AS task_id, (data->>'attempt')::int AS attempt, state::text
      FROM pgboss.job WHERE name = 'weft.default.pb.work' ORDER BY created_on`;

  it('negotiates transactional dispatch with PgStore', () => {
    expect(engine.context.dispatchMode.kind).toBe('in_transaction');
  });

  it('commits each task row with its job', async () => {
    const before = (await jobs()).length;
    const run = await engine.runs.start({ namespace: 'default', definition: 'one', input: {} });
    const [task] = await engine.context.store.listTasks(run.id);
    const after = await jobs();
    expect(after).toHaveLength(before + 1);
    expect(after.at(-1)).toEqual({ taskId: task!.id, attempt: 1, state: 'created' });
  });

  it('leaves no job when the transaction rolls back', async () => {
    const before = await jobs();
    const disarm = armFault('pass.after-write', () => {
      throw new Error('rolled back after the writes');
    });
    try {
      await expect(engine.runs.start({ namespace: 'default', definition: 'one', input: {} })).rejects.toThrow(
        'rolled back',
      );
    } finally {
      disarm();
    }
    expect(await jobs()).toEqual(before);
    // And the task the job would have named does not exist either.
    const [orphans] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pgboss.job j
       WHERE j.name = 'weft.default.pb.work'
         AND NOT EXISTS (SELECT 1 FROM weft.tasks t WHERE t.id = (j.data->>'taskId')::uuid)`;
    expect(orphans!.n).toBe(0);
  });

  it("holds a job back until the task's not-before time", async () => {
    const run = await engine.runs.start({ namespace: 'default', definition: 'one', input: {} });
    const [task] = await engine.context.store.listTasks(run.id);
    const dispatcher = engine.context.dispatcher as PgBossDispatcher;
    const notBefore = new Date(Date.now() + 60_000);
    await dispatcher.enqueue([
      {
        taskId: task!.id,
        runId: run.id,
        attempt: 1,
        namespace: 'default',
        taskType: 'pb.work',
        priority: 0,
        notBefore,
      },
    ]);
    const [row] = await db.sql<{ startAfter: Date }[]>`
      SELECT start_after FROM pgboss.job WHERE data->>'taskId' = ${task!.id} ORDER BY created_on DESC LIMIT 1`;
    expect(Math.abs(row!.startAfter.getTime() - notBefore.getTime())).toBeLessThan(1000);
    // Only the job sent with the task is fetchable now; the held-back one is not.
    const fetched = await boss.fetch<{ taskId: string }>('weft.default.pb.work', { batchSize: 100 });
    expect(fetched.filter((j) => j.data.taskId === task!.id)).toHaveLength(1);
  });
});
