import type { LeasedTask } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, fleet, pollAll } from '../fleet.js';
import { completed, eventually } from '../helpers.js';

// Invariant 15 (semaphore permits count only while their attempt runs) and invariant 18 (counted under the
// semaphore's advisory lock). Two workflows share the semaphore `db` with 3 permits: `one` needs 1 permit,
// `two` needs 2. Ten dispatchers lease at once; the permits held by running attempts never exceed 3.

const PERMITS = 3;
let f: Fleet;
beforeAll(async () => {
  f = await fleet(10, { leaseMs: 60_000 });
  await f.main.definitions.deploy(
    'default',
    `name: one
limits:
  semaphores: { db: ${PERMITS} }
nodes:
  - { id: a, task_type: sem.one, semaphores: [db] }
`,
  );
  await f.main.definitions.deploy(
    'default',
    `name: two
nodes:
  - { id: a, task_type: sem.two, semaphores: { db: 2 } }
`,
  );
});
afterAll(async () => {
  await f?.close();
});

async function permitsHeld(): Promise<number> {
  const [row] = (await f.db.sql`
    SELECT coalesce(sum(h.amount), 0)::int AS n FROM weft.holds h
      JOIN weft.tasks t ON t.run_id = h.run_id AND t.id = h.task_id AND t.attempt = h.attempt
     WHERE h.gate = 'semaphore:default:db' AND t.status = 'running'`) as unknown as [{ n: number }];
  return row.n;
}

const need = (t: LeasedTask) => (t.taskType === 'sem.two' ? 2 : 1);

describe('named semaphores', () => {
  it('ten dispatchers at once never hold more permits than the semaphore has', async () => {
    await Promise.all([
      ...Array.from({ length: 20 }, () =>
        f.main.runs.start({ namespace: 'default', definition: 'one', input: {} }),
      ),
      ...Array.from({ length: 10 }, () =>
        f.main.runs.start({ namespace: 'default', definition: 'two', input: {} }),
      ),
    ]);
    const held: LeasedTask[] = [];
    let finished = 0;
    for (let round = 0; round < 40 && finished < 30; round++) {
      held.push(...(await pollAll(f.engines, ['sem.one', 'sem.two'], 5)).flat());
      expect(held.reduce((n, t) => n + need(t), 0)).toBeLessThanOrEqual(PERMITS);
      expect(await permitsHeld()).toBeLessThanOrEqual(PERMITS);
      const done = held.splice(0, 1);
      if (done.length > 0)
        await f.main.tasks.report({
          namespace: 'default',
          worker: 'w',
          reports: done.map((t) => completed(t)),
        });
      finished += done.length;
    }
    // Both kinds got through: the 2-permit tasks were not starved for good.
    expect(finished).toBe(30);
  });

  it('takes permits all or nothing, and a refused task stays on the queue for the next lease', async () => {
    const [holder] = await Promise.all([
      f.main.runs.start({ namespace: 'default', definition: 'one', input: {} }),
      f.main.runs.start({ namespace: 'default', definition: 'one', input: {} }),
    ]);
    void holder;
    const ones = await f.main.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['sem.one'],
      max: 2,
      waitMs: 0,
    });
    expect(ones).toHaveLength(2);
    const run = await f.main.runs.start({ namespace: 'default', definition: 'two', input: {} });
    // One permit is free; the task needs two: it is not leased (no half grant), and it stays queued.
    expect(await pollAll([f.main], ['sem.two'], 1)).toEqual([[]]);
    const [queued] = (await f.db.sql`
      SELECT t.status, (SELECT count(*)::int FROM weft.queue q WHERE q.task_id = t.id) AS rows
        FROM weft.tasks t WHERE t.run_id = ${run.id}::uuid`) as unknown as [{ status: string; rows: number }];
    expect(queued).toEqual({ status: 'queued', rows: 1 });
    // A report releases its permit in its own transaction: the next poll gets the task at once, not after
    // any lease ran out (leases here last a minute).
    await f.main.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(ones[0]!)] });
    const [two] = await f.main.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['sem.two'],
      max: 1,
      waitMs: 0,
    });
    expect(two?.runId).toBe(run.id);
    await f.main.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(ones[1]!), completed(two!)],
    });
    expect(await permitsHeld()).toBe(0);
  });

  it('a waiting poll is woken when a report frees a permit', async () => {
    await f.main.runs.start({ namespace: 'default', definition: 'two', input: {} });
    await f.main.runs.start({ namespace: 'default', definition: 'two', input: {} });
    const [first] = await f.main.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['sem.two'],
      max: 2,
      waitMs: 0,
    });
    expect(first).toBeDefined();
    const waiting = f.main.tasks.poll({
      namespace: 'default',
      worker: 'w2',
      taskTypes: ['sem.two'],
      max: 1,
      waitMs: 20_000,
    });
    // Report only once the poll is waiting, however long it took to get there.
    const polls = f.main.context.wakeups.polls;
    await eventually(async () => (polls.size > 0 ? true : undefined), 10_000, 'the poll to wait');
    await f.main.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(first!)] });
    const got = await waiting;
    // It answered with the task: a poll that was not woken answers nothing when its 20 s wait runs out.
    expect(got).toHaveLength(1);
    await f.main.tasks.report({ namespace: 'default', worker: 'w2', reports: [completed(got[0]!)] });
  });

  it('a crashed worker loses its permits with its lease', async () => {
    const g = await fleet(1, { leaseMs: 300, leasePollMs: 50 });
    try {
      await g.main.definitions.deploy(
        'default',
        'name: s1\nlimits: { semaphores: { only: 1 } }\nnodes:\n  - { id: a, task_type: s1.a, semaphores: [only], retry: { max_attempts: 1 } }\n',
      );
      await g.main.runs.start({ namespace: 'default', definition: 's1', input: {} });
      await g.main.runs.start({ namespace: 'default', definition: 's1', input: {} });
      const [crashed] = await g.main.tasks.poll({
        namespace: 'default',
        worker: 'dies',
        taskTypes: ['s1.a'],
        max: 2,
        waitMs: 0,
      });
      expect(crashed).toBeDefined();
      // No heartbeat: the lease expires, the reaper ends the attempt, and the permit goes with it.
      const next = await eventually(async () => {
        const got = await g.main.tasks.poll({
          namespace: 'default',
          worker: 'w',
          taskTypes: ['s1.a'],
          max: 1,
          waitMs: 0,
        });
        return got.length > 0 ? got : undefined;
      });
      expect(next[0]!.runId).not.toBe(crashed!.runId);
    } finally {
      await g.close();
    }
  });
});
