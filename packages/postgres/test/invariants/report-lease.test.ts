import { Engine, type LeasedTask } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, failed } from '../helpers.js';

// A report also leases queued tasks for the room its worker has left, in the report's own transaction
// (invariant 13: one holder per attempt, the queue and the task changed together). Reports and polls on
// separate connections race for the same queued tasks: each task must reach one worker, and the task row must
// name that worker and the token it was given. Tasks under a limit are leased for the report after its commit,
// in a transaction whose lease counts the limit under its lock, as a poll's does (invariant 18).

const ENGINES = 6;
let db: TestDatabase;
const engines: Engine[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  for (let i = 0; i < ENGINES; i++) {
    const engine = new Engine({
      store: new PgStore(db.pool(2)),
      config: { decidePollMs: 20, backgroundLoops: i === 0, crossProcessWakeups: false },
    });
    await engine.start();
    engines.push(engine);
  }
  const main = engines[0]!;
  await main.definitions.deploy(
    'default',
    'name: pair\nnodes:\n  - { id: x, task_type: rl.x }\n  - { id: y, task_type: rl.q }\nedges:\n  - { from: x, to: y }\n',
  );
  await main.definitions.deploy(
    'default',
    // Two steps: the report of the first leaves its run going (a report that ends its run leases nothing).
    'name: gated\nlimits:\n  semaphores: { rl-one: 1 }\nnodes:\n  - { id: g, task_type: rl.g, semaphores: [rl-one] }\n  - { id: h, task_type: rl.h }\nedges:\n  - { from: g, to: h }\n',
  );
  await main.definitions.deploy('default', 'name: single\nnodes:\n  - { id: s, task_type: rl.q }\n');
  await main.definitions.deploy(
    'default',
    'name: stopper\nnodes:\n  - { id: a, task_type: rl.a, retry: { max_attempts: 1 } }\n  - { id: b, task_type: rl.q }\n',
  );
});
afterAll(async () => {
  for (const e of engines) await e.stop();
  await db?.drop();
});

const start = (definition: string) => engines[0]!.runs.start({ namespace: 'default', definition, input: {} });

const poll = (engine: Engine, worker: string, types: string[], max: number) =>
  engine.tasks.poll({ namespace: 'default', worker, taskTypes: types, max, waitMs: 0 });

/** Leases every queued task of the type left over by a test, so the next starts from an empty queue. */
async function drain(type: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const got = await poll(engines[0]!, 'drain', [type], 100);
    if (got.length === 0) return;
    await engines[0]!.tasks.report({
      namespace: 'default',
      worker: 'drain',
      reports: got.map((t) => completed(t)),
    });
  }
  throw new Error(`the queue of ${type} did not drain`);
}

/** The task rows as they are now: status, worker and lease token by task id. */
async function rows(ids: readonly string[]) {
  const found = await db.sql<
    { id: string; status: string; worker: string | null; leaseToken: string | null }[]
  >`
    SELECT id::text, status, worker, lease_token::text FROM weft.tasks WHERE id = ANY(${ids}::uuid[])`;
  return new Map(found.map((r) => [r.id, r]));
}

describe('reports lease queued tasks for their free slots', () => {
  it('hands the reporting worker a queued task of another run with its own next task', async () => {
    await drain('rl.q');
    const other = await start('single');
    const run = await start('pair');
    const [x] = await poll(engines[0]!, 'w1', ['rl.x'], 1);
    expect(x!.runId).toBe(run.id);
    const { leased } = await engines[1]!.tasks.report({
      namespace: 'default',
      worker: 'w1',
      reports: [completed(x!)],
      next: { taskTypes: ['rl.q'], max: 5 },
    });
    expect(leased.map((t) => t.runId).sort()).toEqual([run.id, other.id].sort());
    const now = await rows(leased.map((t) => t.id));
    for (const t of leased)
      expect(now.get(t.id)).toMatchObject({ status: 'running', worker: 'w1', leaseToken: t.leaseToken });
    expect(await poll(engines[2]!, 'w2', ['rl.q'], 5)).toEqual([]);
    await engines[1]!.tasks.report({
      namespace: 'default',
      worker: 'w1',
      reports: leased.map((t) => completed(t)),
    });
  });

  it('a report whose decision stops its run leases none of the run queued tasks', async () => {
    await drain('rl.q');
    const run = await start('stopper');
    const [a] = await poll(engines[0]!, 'w1', ['rl.a'], 1);
    // The failure ends the run and cancels its queued task b in the same transaction: b must not reach
    // the worker (it would run a task of a failed run), and must end cancelled, not held.
    const { leased } = await engines[1]!.tasks.report({
      namespace: 'default',
      worker: 'w1',
      reports: [failed(a!, 'card declined', false)],
      next: { taskTypes: ['rl.q'], max: 5 },
    });
    expect(leased.filter((t) => t.runId === run.id)).toEqual([]);
    expect((await engines[0]!.runs.get(run.id)).status).toBe('failed');
    const tasks = await db.sql<{ nodeId: string; status: string }[]>`
      SELECT node_id, status FROM weft.tasks WHERE run_id = ${run.id}::uuid ORDER BY node_id`;
    expect(tasks).toEqual([
      { nodeId: 'a', status: 'failed' },
      { nodeId: 'b', status: 'cancelled' },
    ]);
  });

  it('reports and polls on separate connections lease each queued task once', async () => {
    for (let round = 0; round < 5; round++) {
      await drain('rl.q');
      const singles = await Promise.all(Array.from({ length: 30 }, () => start('single')));
      const pairs = await Promise.all(Array.from({ length: 2 * ENGINES }, () => start('pair')));
      const xs = await poll(engines[0]!, 'x', ['rl.x'], 100);
      expect(xs).toHaveLength(pairs.length);
      // Every engine at once: one report of two x tasks (its worker has room for 8) and one poll.
      const got = await Promise.all(
        engines.flatMap((engine, i) => [
          engine.tasks
            .report({
              namespace: 'default',
              worker: `r${i}`,
              reports: xs.slice(2 * i, 2 * i + 2).map((t) => completed(t)),
              next: { taskTypes: ['rl.q'], max: 8 },
            })
            .then((out) => out.leased.map((t) => ({ worker: `r${i}`, task: t }))),
          poll(engine, `p${i}`, ['rl.q'], 8).then((ts) => ts.map((t) => ({ worker: `p${i}`, task: t }))),
        ]),
      );
      const all = got.flat();
      const ids = all.map((g) => g.task.id);
      expect(new Set(ids).size).toBe(ids.length);
      const known = new Set([...singles.map((r) => r.id), ...pairs.map((r) => r.id)]);
      expect(all.every((g) => known.has(g.task.runId))).toBe(true);
      const now = await rows(ids);
      for (const { worker, task } of all)
        expect(now.get(task.id)).toMatchObject({ status: 'running', worker, leaseToken: task.leaseToken });
      // What nobody took is still queued and leasable: nothing was lost between queue and task.
      const left = await db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM weft.tasks t JOIN weft.queue q ON q.task_id = t.id
         WHERE t.status = 'queued' AND t.task_type = 'rl.q'`;
      expect(left[0]!.n + all.length).toBe(singles.length + pairs.length);
      await finishAll(all.map((g) => g.task));
    }
  });
});

describe('a report racing a poll for a task under a limit', () => {
  /** Sessions of this database waiting for a lock another holds. */
  const waiting = async () => {
    const [row] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    return row!.n;
  };
  const settled = <T>(p: Promise<T>) => {
    const s = { done: false, promise: p };
    p.then(
      () => (s.done = true),
      () => (s.done = true),
    );
    return s;
  };

  it('never lets a report and a poll both take the one permit', async () => {
    const first = await start('gated');
    const a = await start('gated');
    await start('gated');
    const [held] = await poll(engines[0]!, 'w1', ['rl.g'], 1);
    expect(held!.runId).toBe(first.id);
    // Another session holds the row of the next task in line, so that whoever leases it stops there, with
    // the permit counted as free (the report frees it): the race a slow lease runs into, made certain. A
    // report whose lease ran past its own COMMIT held no lock by then, and the poll took the other task.
    const [line] = await db.sql<{ id: string }[]>`
      SELECT id::text FROM weft.tasks WHERE run_id = ${a.id}::uuid AND node_id = 'g'`;
    const next = line!.id;
    const blocker = await db.sql.reserve();
    try {
      await blocker`BEGIN`;
      await blocker`SELECT 1 FROM weft.tasks WHERE id = ${next}::uuid FOR UPDATE`;
      const report = settled(
        engines[1]!.tasks.report({
          namespace: 'default',
          worker: 'w1',
          reports: [completed(held!)],
          next: { taskTypes: ['rl.g'], max: 1 },
        }),
      );
      await eventually(async () => (report.done || (await waiting()) > 0 ? true : undefined), 10_000);
      const before = await waiting();
      // The poll either leases the task in line (and waits on the row), or waits on the limit's lock.
      const polled = settled(poll(engines[2]!, 'w2', ['rl.g'], 1));
      await eventually(
        async () => (polled.done || (await waiting()) > before ? true : undefined),
        10_000,
        'the poll to lease or to wait',
      );
      await blocker`ROLLBACK`;
      const [{ leased }, got] = await Promise.all([report.promise, polled.promise]);
      const running = await db.sql<{ runId: string }[]>`
        SELECT run_id::text FROM weft.tasks WHERE task_type = 'rl.g' AND status = 'running'`;
      expect(running).toHaveLength(1);
      expect([...leased, ...got].map((t) => t.runId)).toEqual(running.map((r) => r.runId));
      await finishAll([...leased, ...got]);
    } finally {
      await blocker`ROLLBACK`.catch(() => {});
      blocker.release();
    }
    await drain('rl.g');
    await drain('rl.h');
  });
});

async function finishAll(tasks: readonly LeasedTask[]): Promise<void> {
  if (tasks.length === 0) return;
  await engines[0]!.tasks.report({
    namespace: 'default',
    worker: 'any',
    reports: tasks.map((t) => completed(t)),
  });
}
