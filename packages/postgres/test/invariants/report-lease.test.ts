import { Engine, type LeasedTask } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, failed } from '../helpers.js';

// A report also leases queued tasks for the room its worker has left, in the report's own transaction
// (invariant 13: one holder per attempt, the queue and the task changed together). Reports and polls on
// separate connections race for the same queued tasks: each task must reach one worker, and the task row must
// name that worker and the token it was given.

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

async function finishAll(tasks: readonly LeasedTask[]): Promise<void> {
  if (tasks.length === 0) return;
  await engines[0]!.tasks.report({
    namespace: 'default',
    worker: 'any',
    reports: tasks.map((t) => completed(t)),
  });
}
