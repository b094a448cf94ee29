import { HTTP_TASK_TYPE } from '@weft/core';
import { ANY_NAMESPACE, type LeasedTask } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, fleet } from '../fleet.js';
import { completed } from '../helpers.js';

// Invariants 13, 16 and 18, for the server's own system-task runner. It polls every namespace at once, yet an
// `http` task counts against the limits of its own namespace: its semaphore permits, and a concurrency cap on
// `weft.http` set in that namespace. Five servers' runners poll at the same instant; neither limit is ever
// exceeded, and one namespace's limits never hold back another's tasks.

let f: Fleet;
beforeAll(async () => {
  // The runners are driven by hand here (systemTasks off), polling as the runner does: every namespace.
  f = await fleet(5, { leaseMs: 60_000, systemTasks: false });
  await f.main.definitions.deploy(
    'alpha',
    `name: call
limits:
  semaphores: { crm: 1 }
nodes:
  - { id: c, kind: http, url: "'http://127.0.0.1:9/never'", semaphores: [crm] }
`,
  );
  await f.main.limits.set({
    namespace: 'beta',
    kind: 'concurrency',
    name: HTTP_TASK_TYPE,
    max: 2,
    windowMs: null,
  });
  await f.main.definitions.deploy(
    'beta',
    `name: call\nnodes:\n  - { id: c, kind: http, url: "'http://127.0.0.1:9/never'" }\n`,
  );
  await f.main.definitions.deploy(
    'gamma',
    `name: call\nnodes:\n  - { id: c, kind: http, url: "'http://127.0.0.1:9/never'" }\n`,
  );
});
afterAll(async () => {
  await f?.close();
});

const runner = (i: number) =>
  f.engines[i]!.tasks.poll({
    namespace: ANY_NAMESPACE,
    worker: `weft-system@${i}`,
    taskTypes: [HTTP_TASK_TYPE],
    max: 10,
    waitMs: 0,
  });

async function namespaceOf(task: LeasedTask): Promise<string> {
  const run = await f.main.runs.get(task.runId);
  return run.namespace;
}

describe('the system-task runner under limits', () => {
  it('counts every http task against its own namespace, whoever polls', async () => {
    for (const ns of ['alpha', 'beta', 'gamma'])
      await Promise.all(
        Array.from({ length: 4 }, () => f.main.runs.start({ namespace: ns, definition: 'call', input: {} })),
      );
    const got = (await Promise.all(f.engines.map((_, i) => runner(i)))).flat();
    const by = new Map<string, LeasedTask[]>();
    for (const t of got) {
      const ns = await namespaceOf(t);
      by.set(ns, [...(by.get(ns) ?? []), t]);
    }
    // alpha: one permit; beta: a cap of two; gamma: no limit, all four.
    expect(by.get('alpha')).toHaveLength(1);
    expect(by.get('beta')).toHaveLength(2);
    expect(by.get('gamma')).toHaveLength(4);
    const [held] = (await f.db.sql`
      SELECT count(*)::int AS n FROM weft.holds h
        JOIN weft.tasks t ON t.run_id = h.run_id AND t.id = h.task_id AND t.attempt = h.attempt
       WHERE h.gate = 'semaphore:alpha:crm' AND t.status = 'running'`) as unknown as [{ n: number }];
    expect(held.n).toBe(1);
    // Nothing more while they run.
    expect((await Promise.all(f.engines.map((_, i) => runner(i)))).flat()).toEqual([]);
    // The runner reports for every namespace too; a report gives the permit and the slot back at once.
    const { verdicts } = await f.main.tasks.report({
      namespace: ANY_NAMESPACE,
      worker: 'weft-system@0',
      reports: [
        completed(by.get('alpha')![0]!, { status: 200 }),
        completed(by.get('beta')![0]!, { status: 200 }),
      ],
    });
    expect(verdicts.map((v) => v.accepted)).toEqual([true, true]);
    const next = (await Promise.all(f.engines.map((_, i) => runner(i)))).flat();
    const nextBy = await Promise.all(next.map(namespaceOf));
    expect(nextBy.sort()).toEqual(['alpha', 'beta']);
  });

  it('renews the leases of every namespace', async () => {
    await f.main.runs.start({ namespace: 'gamma', definition: 'call', input: {} });
    const [task] = await runner(0);
    expect(task).toBeDefined();
    const { held, lost } = await f.main.tasks.heartbeat(ANY_NAMESPACE, 'weft-system@0', [
      { runId: task!.runId, taskId: task!.id, attempt: task!.attempt, leaseToken: task!.leaseToken },
    ]);
    expect({ held, lost }).toEqual({ held: [task!.id], lost: [] });
  });
});
