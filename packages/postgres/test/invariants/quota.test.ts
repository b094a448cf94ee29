import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, fleet, pollAll } from '../fleet.js';

// Invariant 18: a namespace's quota of running runs holds when many starters race. Counting the running runs
// and inserting new ones happen under the namespace's transaction-scoped advisory lock; without it, every
// starter counts the same running runs and all of them insert.

const NS = 'quota-ns';
let f: Fleet;
beforeAll(async () => {
  f = await fleet(10);
  await f.main.definitions.deploy(NS, 'name: q\nnodes:\n  - { id: a, task_type: q.a }\n');
  await f.main.limits.set({ namespace: NS, kind: 'quota', name: '', max: 5, windowMs: null });
});
afterAll(async () => {
  await f?.close();
});

async function running(): Promise<number> {
  const [row] = (await f.db.sql`
    SELECT count(*)::int AS n FROM weft.runs WHERE namespace = ${NS} AND status = 'running'`) as unknown as [
    { n: number },
  ];
  return row.n;
}

describe('namespace quota', () => {
  it('ten starters at once never make more running runs than the quota', async () => {
    const results = await Promise.allSettled(
      f.engines.flatMap((e, i) =>
        [0, 1, 2].map((j) => e.runs.start({ namespace: NS, definition: 'q', input: { i, j } })),
      ),
    );
    expect(await running()).toBe(5);
    const started = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected');
    expect(started).toHaveLength(5);
    expect(refused).toHaveLength(25);
    expect((refused[0] as PromiseRejectedResult).reason).toMatchObject({
      code: 'quota_exceeded',
      status: 429,
    });
  });

  it('a finished run frees its place', async () => {
    const [tasks] = await pollAll([f.main], ['q.a'], 2, NS);
    await f.main.tasks.report({
      namespace: NS,
      worker: 'w',
      reports: tasks!.map((t) => ({
        runId: t.runId,
        taskId: t.id,
        attempt: t.attempt,
        leaseToken: t.leaseToken,
        outcome: { kind: 'completed' as const, output: null },
      })),
    });
    expect(await running()).toBe(3);
    const again = await Promise.allSettled(
      f.engines.map((e) => e.runs.start({ namespace: NS, definition: 'q', input: {} })),
    );
    expect(again.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    expect(await running()).toBe(5);
  });

  it('namespaces without a quota are not limited', async () => {
    await f.main.definitions.deploy('free', 'name: q\nnodes:\n  - { id: a, task_type: q.a }\n');
    const runs = await Promise.all(
      Array.from({ length: 20 }, () => f.main.runs.start({ namespace: 'free', definition: 'q', input: {} })),
    );
    expect(runs).toHaveLength(20);
  });
});
