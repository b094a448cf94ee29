import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, type Harness, harness, lease } from './helpers.js';

const REFUND = `
name: refund
nodes:
  - { id: check, task_type: refund.check }
  - id: approve
    kind: human
    title: Approve the refund
    input: { amount: nodes.check.output.amount }
    form: { type: object, required: [ok], properties: { ok: { type: boolean } } }
    assignees: [finance]
    deadline: { after: 400ms, to: escalate }
  - { id: pay, task_type: refund.pay, input: { ok: nodes.approve.output.ok } }
  - { id: escalate, task_type: refund.escalate }
edges:
  - { from: check, to: approve }
  - { from: approve, to: pay }
`;

let h: Harness;
beforeAll(async () => {
  h = await harness();
  await h.engine.definitions.deploy('default', REFUND);
  await h.engine.definitions.deploy(
    'default',
    REFUND.replace('name: refund', 'name: refund-slow').replace('400ms', '1h'),
  );
  await h.engine.definitions.deploy(
    'default',
    'name: strict\nnodes:\n  - { id: ask, kind: human, title: Answer, deadline: 300ms }\n',
  );
});
afterAll(async () => {
  await h?.close();
});

async function openTask(runId: string) {
  const [task] = await eventually(async () => {
    const list = await h.engine.inbox.list({ namespace: 'default', runId, limit: 10 });
    return list.length > 0 ? list : undefined;
  });
  return task!;
}

describe('human tasks', () => {
  it('a person claims and completes a task with data matching its form, and the run moves on', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'refund-slow', input: {} });
    const [check] = await lease(h.engine, ['refund.check']);
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(check!, { amount: 42 })],
    });
    const task = await openTask(run.id);
    expect(task).toMatchObject({
      title: 'Approve the refund',
      assignees: ['finance'],
      input: { amount: 42 },
      state: 'open',
    });
    expect(await h.engine.inbox.list({ namespace: 'default', assignee: 'ann', limit: 10 })).toHaveLength(0);
    expect(await h.engine.inbox.list({ namespace: 'default', assignee: 'finance', limit: 10 })).toHaveLength(
      1,
    );
    expect(await h.engine.inbox.list({ namespace: 'elsewhere', limit: 10 })).toHaveLength(0);

    await h.engine.inbox.claim('default', task.taskId, 'ann');
    await expect(h.engine.inbox.claim('default', task.taskId, 'bob')).rejects.toMatchObject({
      code: 'human_task_taken',
    });
    await expect(h.engine.inbox.complete('default', task.taskId, 'bob', { ok: true })).rejects.toMatchObject({
      code: 'human_task_taken',
    });
    await expect(h.engine.inbox.complete('default', task.taskId, 'ann', { ok: 'yes' })).rejects.toMatchObject(
      {
        code: 'invalid_data',
      },
    );
    await h.engine.inbox.release('default', task.taskId, 'ann');
    await h.engine.inbox.claim('default', task.taskId, 'bob');
    const done = await h.engine.inbox.complete('default', task.taskId, 'bob', { ok: true });
    expect(done).toMatchObject({ state: 'completed', completedBy: 'bob', data: { ok: true } });

    const [pay] = await lease(h.engine, ['refund.pay']);
    expect(pay!.input).toEqual({ ok: true });
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(pay!, 'paid')] });
    const finished = await eventually(async () => {
      const r = await h.engine.runs.get(run.id);
      return r.status === 'running' ? undefined : r;
    });
    expect(finished.status).toBe('completed');
    const tasks = await h.store.listTasks(run.id);
    expect(tasks.find((t) => t.nodeId === 'escalate')?.status).toBe('skipped');
    const history = await h.store.readHistory(run.id, 0, 100);
    expect(history.map((e) => e.type)).toContain('human.opened');
    await expect(h.engine.inbox.complete('default', task.taskId, 'bob', { ok: true })).rejects.toMatchObject({
      code: 'human_task_closed',
    });
  });

  it('when the deadline passes first, the deadline edge is taken and the task leaves the inbox', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'refund', input: {} });
    const [check] = await lease(h.engine, ['refund.check']);
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(check!, { amount: 7 })],
    });
    const task = await openTask(run.id);
    const [escalate] = await eventually(async () => {
      const got = await lease(h.engine, ['refund.escalate']);
      return got.length > 0 ? got : undefined;
    });
    expect(escalate!.runId).toBe(run.id);
    expect(await h.engine.inbox.list({ namespace: 'default', runId: run.id, limit: 10 })).toHaveLength(0);
    expect((await h.engine.inbox.get('default', task.taskId)).state).toBe('expired');
    await expect(h.engine.inbox.complete('default', task.taskId, 'late', { ok: true })).rejects.toMatchObject(
      {
        code: 'human_task_closed',
      },
    );
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(escalate!)] });
    const finished = await eventually(async () => {
      const r = await h.engine.runs.get(run.id);
      return r.status === 'running' ? undefined : r;
    });
    expect(finished.status).toBe('completed');
    const tasks = await h.store.listTasks(run.id);
    expect(tasks.find((t) => t.nodeId === 'pay')?.status).toBe('skipped');
    expect(tasks.find((t) => t.nodeId === 'approve')?.status).toBe('timed_out');
  });

  it('a deadline with no edge fails the run', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'strict', input: {} });
    const finished = await eventually(async () => {
      const r = await h.engine.runs.get(run.id);
      return r.status === 'running' ? undefined : r;
    });
    expect(finished.status).toBe('failed');
    expect(finished.error?.message).toMatch(/nobody answered within the deadline/);
  });

  it('a human task is answered through the inbox, not finished by hand as a worker task', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'refund-slow', input: {} });
    const [check] = await lease(h.engine, ['refund.check']);
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(check!, { amount: 3 })],
    });
    const task = await openTask(run.id);
    await expect(
      h.engine.control.completeTask(run.id, 'approve', { by: 'ops', output: { ok: false } }),
    ).rejects.toThrow(/human node/);
    expect((await h.engine.inbox.get('default', task.taskId)).state).toBe('open');
    await h.engine.runs.cancel(run.id, 'ops');
    expect((await h.engine.inbox.get('default', task.taskId)).state).toBe('cancelled');
  });

  it('a cancelled run takes its task out of the inbox', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'refund', input: {} });
    const [check] = await lease(h.engine, ['refund.check']);
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(check!, { amount: 1 })],
    });
    const task = await openTask(run.id);
    await h.engine.runs.cancel(run.id, 'test');
    expect(await h.engine.inbox.list({ namespace: 'default', runId: run.id, limit: 10 })).toHaveLength(0);
    await expect(h.engine.inbox.claim('default', task.taskId, 'ann')).rejects.toMatchObject({
      code: 'human_task_closed',
    });
  });
});
