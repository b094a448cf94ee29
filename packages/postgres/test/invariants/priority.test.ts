import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, fleet, pollAll } from '../fleet.js';
import { completed } from '../helpers.js';

// Task priority: higher first within a task type, on the queue and past eager dispatch (a worker reporting
// a task does not get the run's next task straight away while tasks of higher priority are queued).

let f: Fleet;
beforeAll(async () => {
  f = await fleet(5);
  await f.main.definitions.deploy(
    'default',
    'name: low-only\nnodes:\n  - { id: a, task_type: prio.work, priority: 1 }\n',
  );
  await f.main.definitions.deploy(
    'default',
    'name: high-only\nnodes:\n  - { id: a, task_type: prio.work, priority: 9 }\n',
  );
  await f.main.definitions.deploy(
    'default',
    'name: chain\nnodes:\n  - { id: a, task_type: chain.a }\n  - { id: b, task_type: prio.work, priority: 0 }\nedges:\n  - { from: a, to: b }\n',
  );
});
afterAll(async () => {
  await f?.close();
});

describe('task priority', () => {
  it('leases higher priority first within a task type', async () => {
    for (let i = 0; i < 10; i++)
      await f.main.runs.start({ namespace: 'default', definition: 'low-only', input: {} });
    for (let i = 0; i < 10; i++)
      await f.main.runs.start({ namespace: 'default', definition: 'high-only', input: {} });
    const leased = [];
    for (let i = 0; i < 20; i++) {
      const [t] = await f.main.tasks.poll({
        namespace: 'default',
        worker: 'w',
        taskTypes: ['prio.work'],
        max: 1,
        waitMs: 0,
      });
      leased.push(t!);
    }
    const defs = leased.map((t) => t.definitionName);
    expect(defs.slice(0, 10).every((d) => d === 'high-only')).toBe(true);
    expect(defs.slice(10).every((d) => d === 'low-only')).toBe(true);
    await f.main.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: leased.map((t) => completed(t)),
    });
  });

  it('under concurrent dispatchers, high priority still goes first (up to one batch of overlap)', async () => {
    for (let i = 0; i < 20; i++)
      await f.main.runs.start({ namespace: 'default', definition: 'low-only', input: {} });
    for (let i = 0; i < 20; i++)
      await f.main.runs.start({ namespace: 'default', definition: 'high-only', input: {} });
    const first = (await pollAll(f.engines, ['prio.work'], 4)).flat();
    expect(first).toHaveLength(20);
    expect(first.every((t) => t.definitionName === 'high-only')).toBe(true);
    const rest = (await pollAll(f.engines, ['prio.work'], 10)).flat();
    await f.main.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [...first, ...rest].map((t) => completed(t)),
    });
  });

  it('does not hand a worker its next task past queued tasks of higher priority', async () => {
    const run = await f.main.runs.start({ namespace: 'default', definition: 'chain', input: {} });
    const [a] = await f.main.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['chain.a'],
      max: 1,
      waitMs: 0,
    });
    await f.main.runs.start({ namespace: 'default', definition: 'high-only', input: {} });
    // The worker's one free slot takes the queued task of higher priority (leased in the report's own
    // transaction); the run's next task, of lower priority, goes to the queue behind it.
    const { leased } = await f.main.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(a!)],
      next: { taskTypes: ['prio.work'], max: 1 },
    });
    expect(leased.map((t) => t.definitionName)).toEqual(['high-only']);
    const next = leased[0]!;
    const [then] = await f.main.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['prio.work'],
      max: 1,
      waitMs: 0,
    });
    expect(then!.runId).toBe(run.id);
    await f.main.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(next!), completed(then!)],
    });
  });

  it('still hands the next task over when nothing of higher priority waits', async () => {
    await f.main.runs.start({ namespace: 'default', definition: 'chain', input: {} });
    const [a] = await f.main.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['chain.a'],
      max: 1,
      waitMs: 0,
    });
    const { leased } = await f.main.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(a!)],
      next: { taskTypes: ['prio.work'], max: 1 },
    });
    expect(leased).toHaveLength(1);
    await f.main.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(leased[0]!)] });
  });
});
