import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, type Harness, harness } from './helpers.js';

// Every definition and run belongs to one namespace; lookups, workers and limits are scoped to it.

let h: Harness;
const DEF = 'name: job\nnodes:\n  - { id: a, task_type: ns.work }\n';
beforeAll(async () => {
  h = await harness();
  await h.engine.definitions.deploy('team-a', DEF);
  await h.engine.definitions.deploy('team-b', DEF);
});
afterAll(async () => {
  await h?.close();
});

const poll = (namespace: string, worker = 'w') =>
  h.engine.tasks.poll({ namespace, worker, taskTypes: ['ns.work'], max: 10, waitMs: 0 });

describe('namespaces', () => {
  it('definitions and runs are found only in their namespace', async () => {
    await expect(
      h.engine.runs.start({ namespace: 'team-c', definition: 'job', input: {} }),
    ).rejects.toMatchObject({
      code: 'definition_not_found',
    });
    const run = await h.engine.runs.start({ namespace: 'team-a', definition: 'job', input: {} });
    expect((await h.engine.runs.get(run.id, 'team-a')).id).toBe(run.id);
    await expect(h.engine.runs.get(run.id, 'team-b')).rejects.toMatchObject({
      code: 'run_not_found',
      status: 404,
    });
    await expect(h.engine.runs.cancel(run.id, 'x', undefined, 'team-b')).rejects.toMatchObject({
      code: 'run_not_found',
    });
    expect((await h.store.listRuns({ namespace: 'team-b', limit: 10 })).items).toHaveLength(0);
    expect(await h.store.listDefinitions('team-c')).toEqual([]);
    await h.engine.runs.cancel(run.id, 'test', undefined, 'team-a');
  });

  it('workers lease only their namespace, and reports and heartbeats from another namespace are refused', async () => {
    const run = await h.engine.runs.start({ namespace: 'team-a', definition: 'job', input: {} });
    expect(await poll('team-b')).toHaveLength(0);
    const [task] = await poll('team-a');
    expect(task!.runId).toBe(run.id);
    const hb = await h.engine.tasks.heartbeat('team-b', 'w', [
      { runId: task!.runId, taskId: task!.id, attempt: task!.attempt, leaseToken: task!.leaseToken },
    ]);
    expect(hb).toEqual({ held: [], lost: [task!.id] });
    const { verdicts } = await h.engine.tasks.report({
      namespace: 'team-b',
      worker: 'w',
      reports: [completed(task!)],
    });
    expect(verdicts[0]).toMatchObject({
      accepted: false,
      why: 'the task belongs to namespace "team-a", not "team-b"',
    });
    const history = await h.store.readHistory(run.id, 0, 100);
    expect(history.some((e) => e.type === 'task.report_refused')).toBe(false);
    const ok = await h.engine.tasks.report({ namespace: 'team-a', worker: 'w', reports: [completed(task!)] });
    expect(ok.verdicts[0]!.accepted).toBe(true);
  });

  it('limits apply within their namespace only', async () => {
    await h.engine.limits.set({
      namespace: 'team-a',
      kind: 'concurrency',
      name: 'ns.work',
      max: 1,
      windowMs: null,
    });
    for (const ns of ['team-a', 'team-a', 'team-b', 'team-b'])
      await h.engine.runs.start({ namespace: ns, definition: 'job', input: {} });
    expect(await poll('team-a')).toHaveLength(1);
    expect(await poll('team-b')).toHaveLength(2);
    const usage = await h.engine.limits.list('team-a');
    expect(usage).toEqual([
      expect.objectContaining({ kind: 'concurrency', name: 'ns.work', max: 1, used: 1 }),
    ]);
    expect(await h.engine.limits.list('team-b')).toEqual([]);
  });
});
