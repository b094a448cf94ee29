import { isWeftError } from '@weft/core';
import { Engine, type LeasedTask } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually } from '../helpers.js';

// Rerun from a node of a finished run: that node and everything downstream run again as new attempts
// (invariant 10: a new attempt is a new identity, never an overwrite); upstream outputs are kept; the run
// completes again. Two operators asking at the same instant, on separate connections, are serialised by the
// run's row lock: one rerun happens, the other is refused with the state it found.

const DEF = `
name: rerunnable
nodes:
  - { id: a, task_type: rr.work }
  - { id: b, task_type: rr.work, input: { a: nodes.a.output } }
  - { id: e, task_type: rr.work, input: { b: nodes.b.output } }
  - { id: c, task_type: rr.work }
  - { id: d, task_type: rr.work, input: { e: nodes.e.output, c: nodes.c.output } }
edges:
  - { from: a, to: [b, c] }
  - { from: b, to: e }
  - { from: e, to: d }
  - { from: c, to: d }
output:
  result: nodes.d.output
`;

let db: TestDatabase;
let one: Engine;
let two: Engine;

beforeAll(async () => {
  db = await createTestDatabase();
  one = new Engine({
    store: new PgStore(db.pool(4)),
    config: { decidePollMs: 20, crossProcessWakeups: false },
  });
  two = new Engine({
    store: new PgStore(db.pool(4)),
    config: { backgroundLoops: false, crossProcessWakeups: false },
  });
  await one.start();
  await two.start();
  await one.definitions.deploy('default', DEF);
});
afterAll(async () => {
  await one?.stop();
  await two?.stop();
  await db?.drop();
});

/** Works every task of the run until it finishes, answering each node with `answer`. */
async function workToEnd(runId: string, answer: (t: LeasedTask) => unknown) {
  return eventually(async () => {
    const tasks = await one.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['rr.work'],
      max: 10,
      waitMs: 20,
    });
    if (tasks.length > 0)
      await one.tasks.report({
        namespace: 'default',
        worker: 'w',
        reports: tasks.map((t) => completed(t, answer(t) as never)),
      });
    const run = await one.runs.get(runId);
    return run.status === 'running' ? undefined : run;
  }, 15_000);
}

describe('rerun from a node of a finished run', () => {
  it('runs the node and what follows as new attempts, keeps upstream outputs, and completes again', async () => {
    const run = await one.runs.start({ namespace: 'default', definition: 'rerunnable', input: {} });
    const first = await workToEnd(run.id, (t) => `${t.nodeId}1`);
    expect(first).toMatchObject({ status: 'completed', output: { result: 'd1' } });
    const before = await db.sql<{ nodeId: string; attempt: number }[]>`
      SELECT node_id, attempt FROM weft.tasks WHERE run_id = ${run.id}::uuid ORDER BY node_id`;

    // Two operators at once, on separate connections.
    const outcomes = await Promise.allSettled([
      one.control.rerun(run.id, 'b', { by: 'alice', reason: 'bad data from b' }),
      two.control.rerun(run.id, 'b', { by: 'bob', reason: 'same incident' }),
    ]);
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.filter((o) => o.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    const refusal = (lost[0] as PromiseRejectedResult).reason;
    expect(isWeftError(refusal, 'run_not_finished')).toBe(true);
    expect(refusal.status).toBe(409);
    expect(refusal.message).toMatch(/is running; rerun restarts a finished run/);

    const second = await workToEnd(run.id, (t) => `${t.nodeId}2`);
    expect(second).toMatchObject({ status: 'completed', output: { result: 'd2' }, error: null });
    expect(second.finishedAt).not.toBeNull();

    const rows = await db.sql<{ nodeId: string; attempt: number; status: string; input: unknown }[]>`
      SELECT node_id, attempt, status, input FROM weft.tasks WHERE run_id = ${run.id}::uuid ORDER BY node_id, attempt`;
    // New attempts for b, e, d; the old ones are kept as they were. a and c ran once.
    expect(rows.map((r) => `${r.nodeId}${r.attempt}:${r.status}`)).toEqual([
      'a1:completed',
      'b1:completed',
      'b2:completed',
      'c1:completed',
      'd1:completed',
      'd2:completed',
      'e1:completed',
      'e2:completed',
    ]);
    expect(before).toHaveLength(5);
    const input = (node: string, attempt: number) =>
      rows.find((r) => r.nodeId === node && r.attempt === attempt)!.input;
    expect(input('b', 2)).toEqual({ a: 'a1' }); // upstream output kept
    expect(input('e', 2)).toEqual({ b: 'b2' });
    expect(input('d', 2)).toEqual({ e: 'e2', c: 'c1' });

    const history = await one.context.store.readHistory(run.id, 0, 1000);
    expect(history.map((e) => e.seq)).toEqual(history.map((_, i) => i + 1));
    expect(history.filter((e) => e.type === 'run.completed')).toHaveLength(2);
    const rerun = history.filter((e) => e.type === 'run.rerun');
    expect(rerun).toHaveLength(1);
    expect(rerun[0]!.data).toMatchObject({ from: 'b', nodes: ['b', 'e', 'd'] });
  });

  it('a rerun reaching two sinks completes only when both have run again', async () => {
    await one.definitions.deploy(
      'default',
      `
name: two-sinks
nodes:
  - { id: root, task_type: rr.two }
  - { id: left, task_type: rr.two }
  - { id: right, task_type: rr.slow }
edges:
  - { from: root, to: [left, right] }
`,
    );
    const run = await one.runs.start({ namespace: 'default', definition: 'two-sinks', input: {} });
    const work = async (types: string[]) => {
      const tasks = await eventually(async () => {
        const got = await one.tasks.poll({
          namespace: 'default',
          worker: 'w',
          taskTypes: types,
          max: 5,
          waitMs: 20,
        });
        return got.length > 0 ? got : undefined;
      });
      await one.tasks.report({
        namespace: 'default',
        worker: 'w',
        reports: tasks.map((t) => completed(t, t.attempt)),
      });
      return tasks;
    };
    await work(['rr.two']); // root
    await work(['rr.two', 'rr.slow']); // left and right
    await eventually(async () => ((await one.runs.get(run.id)).status === 'completed' ? true : undefined));

    await two.control.rerun(run.id, 'root', { by: 'ops' });
    await work(['rr.two']); // root again
    await work(['rr.two']); // left again; right (another task type) is not worked yet
    await new Promise((r) => setTimeout(r, 100));
    // One sink done again out of two: the run must still be running, with right queued.
    expect((await one.runs.get(run.id)).status).toBe('running');
    await work(['rr.slow']);
    const done = await eventually(async () => {
      const r = await one.runs.get(run.id);
      return r.status === 'completed' ? r : undefined;
    });
    expect(done.output).toEqual({ left: 2, right: 2 });
  });
});
