import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, failed, type Harness, harness, lease } from './helpers.js';

const CHILD = `
name: child
input_schema: { type: object, required: [n], properties: { n: { type: number } } }
nodes:
  - { id: double, task_type: kid.double, input: { n: input.n } }
output: { total: nodes.double.output }
`;

const PARENT = `
name: parent
nodes:
  - { id: sub, kind: sub_workflow, definition: child, input: { n: input.n } }
  - { id: after, task_type: par.after, input: { got: nodes.sub.output.total } }
edges:
  - { from: sub, to: after }
`;

let h: Harness;
beforeAll(async () => {
  h = await harness({ relayPollMs: 50, relayBackoffMs: 50 });
  await h.engine.definitions.deploy('default', CHILD);
  await h.engine.definitions.deploy('default', PARENT);
});
afterAll(async () => {
  await h?.close();
});

async function runOf(id: string, status?: string) {
  return eventually(
    async () => {
      const r = await h.engine.runs.get(id);
      return status === undefined || r.status === status ? r : undefined;
    },
    10_000,
    `run ${id} to be ${status}`,
  );
}

async function childOf(parentId: string, attempt = 1) {
  return eventually(
    async () => {
      const [row] = await h.db.sql<{ id: string; status: string }[]>`
        SELECT id, status FROM weft.runs WHERE parent_run_id = ${parentId}::uuid AND parent_attempt = ${attempt}`;
      return row;
    },
    10_000,
    'the child run',
  );
}

describe('sub_workflow', () => {
  it('starts the child through the outbox and completes with its output', async () => {
    const parent = await h.engine.runs.start({
      namespace: 'default',
      definition: 'parent',
      input: { n: 21 },
    });
    const child = await childOf(parent.id);
    const [task] = await eventually(async () => {
      const got = await lease(h.engine, ['kid.double']);
      return got.length ? got : undefined;
    });
    expect(task).toMatchObject({ runId: child.id, input: { n: 21 } });
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(task!, 42)] });
    await runOf(child.id, 'completed');
    const [after] = await eventually(async () => {
      const got = await lease(h.engine, ['par.after']);
      return got.length ? got : undefined;
    });
    expect(after!.input).toEqual({ got: 42 });
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(after!, 'ok')] });
    await runOf(parent.id, 'completed');
    const tasks = await h.store.listTasks(parent.id);
    expect(tasks.find((t) => t.nodeId === 'sub')).toMatchObject({
      status: 'completed',
      output: { total: 42 },
      childRunId: child.id,
    });
  });

  it('fails with the child', async () => {
    const parent = await h.engine.runs.start({ namespace: 'default', definition: 'parent', input: { n: 1 } });
    const child = await childOf(parent.id);
    const [task] = await eventually(async () => {
      const got = await lease(h.engine, ['kid.double']);
      return got.length ? got : undefined;
    });
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [failed(task!, 'no', false)] });
    const done = await runOf(parent.id, 'failed');
    expect(done.error?.message).toMatch(
      new RegExp(`node "sub" failed: child run ${child.id} failed: node "double" failed: no`),
    );
  });

  it('cancelling the parent cancels the child', async () => {
    const parent = await h.engine.runs.start({ namespace: 'default', definition: 'parent', input: { n: 2 } });
    const child = await childOf(parent.id);
    await h.engine.runs.cancel(parent.id, 'tester', 'changed my mind');
    const gone = await runOf(child.id, 'cancelled');
    expect(gone.error?.message).toMatch(/cancelled by parent run/);
  });

  it('terminating the parent terminates the child', async () => {
    const parent = await h.engine.runs.start({ namespace: 'default', definition: 'parent', input: { n: 3 } });
    const child = await childOf(parent.id);
    await h.engine.control.terminate(parent.id, { by: 'ops', reason: 'stop everything' });
    const gone = await runOf(child.id, 'terminated');
    expect(gone.error?.message).toMatch(/stop everything/);
    expect((await h.engine.runs.get(parent.id)).status).toBe('terminated');
  });

  it('a sub_workflow inside a map starts one child per item and the map collects their outputs', async () => {
    await h.engine.definitions.deploy(
      'default',
      `name: fan-children
nodes:
  - id: each
    kind: map
    items: input.ns
    body:
      nodes:
        - { id: sub, kind: sub_workflow, definition: child, input: { n: item } }
      output: nodes.sub.output.total
`,
    );
    const parent = await h.engine.runs.start({
      namespace: 'default',
      definition: 'fan-children',
      input: { ns: [1, 2, 3] },
    });
    const seen = new Set<string>();
    while (seen.size < 3) {
      const tasks = await eventually(async () => {
        const got = await lease(h.engine, ['kid.double']);
        return got.length ? got : undefined;
      });
      for (const t of tasks) seen.add(t.runId);
      await h.engine.tasks.report({
        namespace: 'default',
        worker: 'w',
        reports: tasks.map((t) => completed(t, (t.input as { n: number }).n * 2)),
      });
    }
    const done = await runOf(parent.id, 'completed');
    expect(done.output).toEqual({ each: [2, 4, 6] });
    const children = await h.db.sql<{ parentIteration: string }[]>`
      SELECT parent_iteration FROM weft.runs WHERE parent_run_id = ${parent.id}::uuid ORDER BY parent_iteration`;
    expect(children.map((c) => c.parentIteration)).toEqual(['0', '1', '2']);
  });

  it('an input the child refuses fails the parent node', async () => {
    const parent = await h.engine.runs.start({
      namespace: 'default',
      definition: 'parent',
      input: { n: 'x' },
    });
    const done = await runOf(parent.id, 'failed');
    expect(done.error?.message).toMatch(/does not match the input_schema of child v1/);
  });
});
