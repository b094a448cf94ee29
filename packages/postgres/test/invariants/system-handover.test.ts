import { HTTP_TASK_TYPE } from '@weft/core';
import { ANY_NAMESPACE, type LeasedTask } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, fleet } from '../fleet.js';
import { completed } from '../helpers.js';

// The server's own system-task runner leases in every namespace (ANY_NAMESPACE), and its reports ask for its
// next tasks like any worker's. A report's decision hands the runner the system tasks it creates, in any
// namespace, unless a queued one of higher priority (in any namespace) waits; queued ones fill the rest of
// its room through the poll's own claim (invariant 13). Runners of several servers report at once on
// separate connections; each task reaches one of them. The runners are driven by hand (systemTasks off),
// reporting and polling as the runner does.

const SERVERS = 4;
const URL = "'http://127.0.0.1:9/never'";
let f: Fleet;

beforeAll(async () => {
  f = await fleet(SERVERS, { leaseMs: 60_000, systemTasks: false });
  // In gamma, one http task at a time.
  await f.main.limits.set({
    namespace: 'gamma',
    kind: 'concurrency',
    name: HTTP_TASK_TYPE,
    max: 1,
    windowMs: null,
  });
  for (const ns of ['alpha', 'beta', 'gamma']) {
    await f.main.definitions.deploy(
      ns,
      `name: two-calls\nnodes:\n  - { id: c1, kind: http, url: "${URL}" }\n  - { id: c2, kind: http, url: "${URL}" }\nedges:\n  - { from: c1, to: c2 }\n`,
    );
    await f.main.definitions.deploy(
      ns,
      `name: urgent\nnodes:\n  - { id: u, kind: http, url: "${URL}", priority: 9 }\n`,
    );
  }
});
afterAll(async () => {
  await f?.close();
});

const start = (namespace: string, definition: string) =>
  f.main.runs.start({ namespace, definition, input: {} });

const poll = (i: number, max: number) =>
  f.engines[i]!.tasks.poll({
    namespace: ANY_NAMESPACE,
    worker: `weft-system@${i}`,
    taskTypes: [HTTP_TASK_TYPE],
    max,
    waitMs: 0,
  });

const report = (i: number, tasks: readonly LeasedTask[], room: number) =>
  f.engines[i]!.tasks.report({
    namespace: ANY_NAMESPACE,
    worker: `weft-system@${i}`,
    reports: tasks.map((t) => completed(t, { status: 200, headers: {}, body: null })),
    next: { taskTypes: [HTTP_TASK_TYPE], max: room },
  });

/** Polls until nothing of the runner's types is queued, reporting what it took, and checks nothing is left. */
async function drain(): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const got = await poll(0, 100);
    if (got.length === 0) return;
    await f.main.tasks.report({
      namespace: ANY_NAMESPACE,
      worker: 'drain',
      reports: got.map((t) => completed(t, { status: 200, headers: {}, body: null })),
    });
  }
  throw new Error('the http queue did not drain');
}

/** The task rows as they are now: status, worker and lease token by task id. */
async function rows(ids: readonly string[]) {
  const found = await f.db.sql<
    { id: string; status: string; worker: string | null; leaseToken: string | null }[]
  >`SELECT id::text, status, worker, lease_token::text FROM weft.tasks WHERE id = ANY(${ids}::uuid[])`;
  return new Map(found.map((r) => [r.id, r]));
}

describe('the system-task runner gets its next tasks with its reports', () => {
  it('a system task created by a report decision is handed to the runner in that report answer', async () => {
    await drain();
    const run = await start('beta', 'two-calls');
    const [c1] = await poll(1, 1);
    expect(c1).toMatchObject({ runId: run.id, nodeId: 'c1' });
    const { verdicts, leased } = await report(1, [c1!], 4);
    expect(verdicts).toEqual([expect.objectContaining({ accepted: true })]);
    expect(leased).toEqual([expect.objectContaining({ runId: run.id, nodeId: 'c2' })]);
    const now = await rows([leased[0]!.id]);
    expect(now.get(leased[0]!.id)).toMatchObject({
      status: 'running',
      worker: 'weft-system@1',
      leaseToken: leased[0]!.leaseToken,
    });
    // It is held, not also queued: no poll finds it.
    expect(await poll(2, 10)).toEqual([]);
    const done = await report(1, leased, 4);
    expect(done.leased).toEqual([]);
    expect((await f.main.runs.get(run.id)).status).toBe('completed');
  });

  it('a report does not hand over a system task past a queued one of higher priority in another namespace', async () => {
    await drain();
    const run = await start('alpha', 'two-calls');
    const [c1] = await poll(1, 1);
    expect(c1).toMatchObject({ runId: run.id, nodeId: 'c1' });
    const urgent = await start('beta', 'urgent');
    // Room for one: the queued task of priority 9 (namespace beta) goes first, the new c2 (priority 0,
    // namespace alpha) waits on the queue behind it.
    const { leased } = await report(1, [c1!], 1);
    expect(leased).toEqual([expect.objectContaining({ runId: urgent.id, nodeId: 'u' })]);
    const next = await poll(2, 10);
    expect(next).toEqual([expect.objectContaining({ runId: run.id, nodeId: 'c2' })]);
    await report(2, [...leased, ...next], 0);
  });

  it('a report leaves a task under a limit to the queue, and leases queued ones only as the limit allows', async () => {
    await drain();
    const run = await start('gamma', 'two-calls');
    const [c1] = await poll(0, 1);
    expect(c1).toMatchObject({ runId: run.id, nodeId: 'c1' });
    const others = await Promise.all([start('gamma', 'two-calls'), start('gamma', 'two-calls')]);
    // The server that set the cap reports (its limit book knows it). The new c2 is under the cap: it is not
    // handed over. Of the queued tasks, the gated lease path admits one, for the slot c1 freed, in a
    // transaction of its own right after the report's commit.
    const { leased } = await report(0, [c1!], 4);
    expect(leased).toHaveLength(1);
    expect(leased[0]).toMatchObject({ nodeId: 'c1' });
    expect(others.map((r) => r.id)).toContain(leased[0]!.runId);
    const [running] = await f.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM weft.tasks t JOIN weft.runs r ON r.id = t.run_id
       WHERE r.namespace = 'gamma' AND t.status = 'running'`;
    expect(running!.n).toBe(1);
    // Nothing more while that one runs.
    expect(await poll(1, 10)).toEqual([]);
    await report(0, leased, 0);
    await drain();
    for (const r of [run, ...others]) expect((await f.main.runs.get(r.id)).status).toBe('completed');
  });

  it('runners of several servers reporting at once never lease the same task', async () => {
    let handed = 0;
    for (let round = 0; round < 4; round++) {
      await drain();
      const chains = await Promise.all(
        Array.from({ length: 3 * SERVERS }, (_, i) => start(i % 2 ? 'alpha' : 'beta', 'two-calls')),
      );
      const firsts = await poll(0, 100);
      expect(firsts).toHaveLength(chains.length);
      // Every other round, queued tasks of higher priority: the reports lease those from the queue. In the
      // others, they are handed the c2 tasks their decisions create, while the polls take from the queue.
      const urgent =
        round % 2 === 0
          ? await Promise.all(
              Array.from({ length: 2 * SERVERS }, (_, i) => start(i % 2 ? 'beta' : 'alpha', 'urgent')),
            )
          : [];
      // Every server at once: its runner reports three c1 tasks with room for four, and polls.
      const got = await Promise.all(
        f.engines.flatMap((_, i) => [
          report(i, firsts.slice(3 * i, 3 * i + 3), 4).then((out) => {
            expect(out.verdicts.every((v) => v.accepted)).toBe(true);
            if (urgent.length === 0) handed += out.leased.length;
            return out.leased.map((task) => ({ worker: `weft-system@${i}`, task }));
          }),
          poll(i, 2).then((ts) => ts.map((task) => ({ worker: `weft-system@${i}`, task }))),
        ]),
      );
      const all = got.flat();
      const ids = all.map((g) => g.task.id);
      expect(new Set(ids).size).toBe(ids.length);
      const now = await rows(ids);
      for (const { worker, task } of all)
        expect(now.get(task.id)).toMatchObject({ status: 'running', worker, leaseToken: task.leaseToken });
      // What nobody took is still queued: every c2 and urgent task is either held once or on the queue.
      const [left] = await f.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM weft.tasks t JOIN weft.queue q ON q.task_id = t.id
         WHERE t.status = 'queued' AND t.task_type = ${HTTP_TASK_TYPE}`;
      expect(left!.n + all.length).toBe(chains.length + urgent.length);
      await f.main.tasks.report({
        namespace: ANY_NAMESPACE,
        worker: 'any',
        reports: all.map((g) => completed(g.task, { status: 200, headers: {}, body: null })),
      });
    }
    // The reports took part in the race: with nothing of higher priority queued, they were handed tasks.
    expect(handed).toBeGreaterThan(0);
  });
});
