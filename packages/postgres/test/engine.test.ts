import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, failed, type Harness, harness, lease } from './helpers.js';

const DIAMOND = `
name: diamond
nodes:
  - { id: a, task_type: work }
  - { id: b, task_type: work, input: { from_a: nodes.a.output } }
  - { id: c, task_type: work }
  - { id: d, task_type: work, input: { b: nodes.b.output, c: nodes.c.output } }
edges:
  - { from: a, to: [b, c] }
  - { from: b, to: d }
  - { from: c, to: d }
`;

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h?.close();
});

describe('engine on PostgreSQL', () => {
  it('deploys versions: same content same version, changed content the next', async () => {
    const first = await h.engine.definitions.deploy('default', DIAMOND);
    const again = await h.engine.definitions.deploy('default', `# same graph\n${DIAMOND}`);
    const changed = await h.engine.definitions.deploy(
      'default',
      DIAMOND.replace('name: diamond', 'name: diamond\ndescription: now with a description'),
    );
    expect([first.record.version, first.created]).toEqual([1, true]);
    expect([again.record.version, again.created]).toEqual([1, false]);
    expect([changed.record.version, changed.created]).toEqual([2, true]);
  });

  it('runs a diamond end to end, through leases and reports', async () => {
    await h.engine.definitions.deploy('default', DIAMOND);
    const run = await h.engine.runs.start({
      namespace: 'default',
      definition: 'diamond',
      input: { order: 1 },
    });
    expect(run.status).toBe('running');
    const [a] = await lease(h.engine, ['work']);
    expect(a).toMatchObject({ nodeId: 'a', attempt: 1, input: { order: 1 } });
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(a!, 'A')] });
    const bc = await lease(h.engine, ['work']);
    expect(bc.map((t) => t.nodeId).sort()).toEqual(['b', 'c']);
    expect(bc.find((t) => t.nodeId === 'b')!.input).toEqual({ from_a: 'A' });
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: bc.map((t) => completed(t, t.nodeId.toUpperCase())),
    });
    const [d] = await eventually(async () => {
      const got = await lease(h.engine, ['work']);
      return got.length ? got : undefined;
    });
    expect(d).toMatchObject({ nodeId: 'd', input: { b: 'B', c: 'C' } });
    const { leased } = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(d!, 'D')],
      next: { taskTypes: ['work'], max: 5 },
    });
    expect(leased).toEqual([]);
    const done = await h.engine.runs.get(run.id);
    expect(done).toMatchObject({ status: 'completed', output: { d: 'D' } });
    const history = await h.store.readHistory(run.id, 0, 100);
    expect(history.map((e) => e.seq)).toEqual(history.map((_, i) => i + 1));
    expect(history.at(-1)?.type).toBe('run.completed');
  });

  it('hands the next task straight to the reporting worker when it asks', async () => {
    await h.engine.definitions.deploy(
      'default',
      'name: pair\nnodes:\n  - { id: x, task_type: eager }\n  - { id: y, task_type: eager }\nedges:\n  - { from: x, to: y }\n',
    );
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'pair', input: {} });
    const [x] = await lease(h.engine, ['eager']);
    const { verdicts, leased } = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(x!, 1)],
      next: { taskTypes: ['eager'], max: 1 },
    });
    expect(verdicts[0]!.accepted).toBe(true);
    expect(leased.map((t) => [t.nodeId, t.runId])).toEqual([['y', run.id]]);
    expect(await lease(h.engine, ['eager'])).toEqual([]);
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(leased[0]!, 2)] });
    expect((await h.engine.runs.get(run.id)).status).toBe('completed');
  });

  it('a report sent twice in one request is applied once', async () => {
    await h.engine.definitions.deploy(
      'default',
      'name: twice\nnodes:\n  - { id: x, task_type: twice.x }\n  - { id: y, task_type: twice.y }\nedges:\n  - { from: x, to: y }\n',
    );
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'twice', input: {} });
    const [x] = await lease(h.engine, ['twice.x']);
    const { verdicts, leased } = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(x!, 1), completed(x!, 1)],
      next: { taskTypes: ['twice.y'], max: 5 },
    });
    expect(verdicts.map((v) => v.accepted)).toEqual([true, true]);
    expect(leased.map((t) => t.nodeId)).toEqual(['y']);
    const history = await h.store.readHistory(run.id, 0, 100);
    expect(history.filter((e) => e.type === 'task.completed').map((e) => e.nodeId)).toEqual(['x']);
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(leased[0]!)] });
  });

  it('retries a failed attempt after its backoff and fails the run when attempts run out', async () => {
    await h.engine.definitions.deploy(
      'default',
      'name: flaky\nnodes:\n  - { id: f, task_type: flaky, retry: { max_attempts: 2, backoff: fixed, delay: 200ms } }\n',
    );
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'flaky', input: {} });
    const [first] = await lease(h.engine, ['flaky']);
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [failed(first!, 'timeout talking to bank')],
    });
    expect(await lease(h.engine, ['flaky'])).toEqual([]);
    const second = await eventually(async () => (await lease(h.engine, ['flaky']))[0], 5000, 'the retry');
    expect(second.attempt).toBe(2);
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [failed(second, 'still down')],
    });
    const final = await eventually(async () => {
      const r = await h.engine.runs.get(run.id);
      return r.status === 'failed' ? r : undefined;
    });
    expect(final.error?.message).toBe('node "f" failed after 2 attempts: still down');
  });

  it('cancels a run; a report for a cancelled task is refused and recorded', async () => {
    await h.engine.definitions.deploy('default', 'name: long\nnodes:\n  - { id: l, task_type: long }\n');
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'long', input: {} });
    const [task] = await lease(h.engine, ['long']);
    await h.engine.runs.cancel(run.id, 'tester', 'not needed');
    const { verdicts } = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(task!, 'late')],
    });
    expect(verdicts[0]).toMatchObject({ accepted: false, why: 'the task is already cancelled' });
    const history = await eventually(async () => {
      const events = await h.store.readHistory(run.id, 0, 100);
      return events.some((e) => e.type === 'task.report_refused') ? events : undefined;
    });
    expect(history.map((e) => e.type)).toEqual([
      'run.started',
      'task.scheduled',
      'run.cancelled',
      'task.report_refused',
    ]);
    await expect(h.engine.runs.cancel(run.id, 'tester')).rejects.toThrow(/already cancelled/);
  });
});
