import { Engine, type LeasedTask, outboxDispatcher, TASKS_DESTINATION } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempBlobs } from '../fleet.js';

// Invariants 13, 16 and 18, for leases by id (the Redis dispatcher's): six servers lease the same announced
// tasks at the same instant. Each task is leased once. When the task type was capped after the tasks were
// announced, none is leased by id: each is moved to the table queue exactly once (its task row lock makes the
// move happen once), and the table's gated path then leases them within the cap.

let db: TestDatabase;
const engines: Engine[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const blobs = tempBlobs();
  for (let i = 0; i < 6; i++) {
    // No relay and no destination: the task messages stay in the outbox, where the test reads them.
    const engine = new Engine({
      store: new PgStore(db.pool(3)),
      blobs,
      dispatcher: outboxDispatcher('redis'),
      config: { backgroundLoops: false, crossProcessWakeups: false, systemTasks: false },
    });
    await engine.start();
    engines.push(engine);
  }
  await engines[0]!.definitions.deploy('default', 'name: free\nnodes:\n  - { id: a, task_type: lb.free }\n');
  await engines[0]!.definitions.deploy('default', 'name: late\nnodes:\n  - { id: a, task_type: lb.late }\n');
});
afterAll(async () => {
  for (const e of engines) await e.stop();
  await db?.drop();
});

async function announce(definition: string, n: number) {
  const runs = await Promise.all(
    Array.from({ length: n }, () => engines[0]!.runs.start({ namespace: 'default', definition, input: {} })),
  );
  return db.sql<{ runId: string; taskId: string; attempt: number }[]>`
    SELECT run_id, task_id, (payload->>'attempt')::int AS attempt FROM weft.outbox
     WHERE destination = ${TASKS_DESTINATION} AND run_id = ANY(${runs.map((r) => r.id)}::uuid[])`;
}

const leaseAll = (taskType: string, tasks: { runId: string; taskId: string; attempt: number }[]) =>
  Promise.all(
    engines.map((e, i) =>
      e.tasks.leaseById({ namespace: 'default', worker: `w${i}`, taskTypes: [taskType], tasks }),
    ),
  );

describe('leases by id under contention', () => {
  it('six servers leasing the same messages lease each task once', async () => {
    const named = await announce('free', 20);
    expect(named).toHaveLength(20);
    const got = (await leaseAll('lb.free', named)).flat();
    expect(got).toHaveLength(20);
    expect(new Set(got.map((t) => t.id)).size).toBe(20);
  });

  it('tasks of a type capped since they were announced are moved to the table once each, then capped', async () => {
    const named = await announce('late', 20);
    expect(named).toHaveLength(20);
    await engines[0]!.limits.set({
      namespace: 'default',
      kind: 'concurrency',
      name: 'lb.late',
      max: 3,
      windowMs: null,
    });
    for (const e of engines) await e.context.limits.refresh();
    const got = (await leaseAll('lb.late', named)).flat();
    expect(got).toEqual([]);
    const [queue] = await db.sql<{ rows: number; tasks: number }[]>`
      SELECT count(*)::int AS rows, count(DISTINCT task_id)::int AS tasks FROM weft.queue WHERE task_type = 'lb.late'`;
    expect(queue).toEqual({ rows: 20, tasks: 20 });
    // Six servers poll the table at once: the cap holds.
    const polled: LeasedTask[] = (
      await Promise.all(
        engines.map((e, i) =>
          e.tasks.poll({ namespace: 'default', worker: `p${i}`, taskTypes: ['lb.late'], max: 5, waitMs: 0 }),
        ),
      )
    ).flat();
    expect(polled).toHaveLength(3);
    const [running] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM weft.tasks WHERE task_type = 'lb.late' AND status = 'running'`;
    expect(running!.n).toBe(3);
  });
});
