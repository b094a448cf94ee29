import { isWeftError } from '@weft/core';
import {
  type BulkProgress,
  bulkOperatorAction as bulkControl,
  type Cascader,
  Engine,
  type StoppedRun,
} from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, failed, type Harness, harness, lease } from './helpers.js';

// Operator actions on real PostgreSQL: what each does to tasks, leases and history, and what is refused.

const CHAIN = `
name: ops-chain
nodes:
  - { id: a, task_type: ops.a, retry: { max_attempts: 1 } }
  - { id: b, task_type: ops.b, input: { a: nodes.a.output } }
edges:
  - { from: a, to: b }
`;

let h: Harness;
beforeAll(async () => {
  h = await harness();
  await h.engine.definitions.deploy('default', CHAIN);
});
afterAll(async () => {
  await h?.close();
});

const start = () => h.engine.runs.start({ namespace: 'default', definition: 'ops-chain', input: {} });
const history = async (runId: string) => (await h.store.readHistory(runId, 0, 1000)).map((e) => e.type);

async function refusal(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (e) {
    if (isWeftError(e)) return { code: e.code, status: e.status, message: e.message };
    throw e;
  }
  throw new Error('the action was not refused');
}

describe('finishing a task by hand', () => {
  it('completes a running task: the worker loses its lease, its report is refused and recorded, the run goes on', async () => {
    const run = await start();
    const [a] = await lease(h.engine, ['ops.a']);
    await h.engine.control.completeTask(run.id, 'a', {
      by: 'ops',
      reason: 'done by phone',
      output: { n: 1 },
    });
    const beat = await h.engine.tasks.heartbeat('default', 'test-worker', [
      { runId: run.id, taskId: a!.id, attempt: 1, leaseToken: a!.leaseToken },
    ]);
    expect(beat.lost).toEqual([a!.id]);
    const late = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(a!, 'x')],
    });
    expect(late.verdicts[0]).toMatchObject({ accepted: false, why: 'the task is already completed' });
    const [b] = await lease(h.engine, ['ops.b']);
    expect(b!.input).toEqual({ a: { n: 1 } });
    const types = await eventually(async () => {
      const t = await history(run.id);
      return t.includes('task.report_refused') ? t : undefined;
    });
    expect(types).toEqual(
      expect.arrayContaining(['task.completed_by_operator', 'task.completed', 'task.report_refused']),
    );
  });

  it('skips a task with an output that the next node reads', async () => {
    const run = await start();
    await h.engine.control.skipTask(run.id, 'a', { by: 'ops', output: 'stand-in' });
    const [b] = await lease(h.engine, ['ops.b']);
    expect(b!.input).toEqual({ a: 'stand-in' });
    const rows = await h.engine.context.store.listTasks(run.id);
    expect(rows.find((t) => t.nodeId === 'a')).toMatchObject({
      status: 'skipped',
      output: 'stand-in',
      error: { reason: 'skipped', message: 'skipped by ops' },
    });
  });

  it('fails a task by hand; the run fails and its history says who', async () => {
    const run = await start();
    const after = await h.engine.control.failTask(run.id, 'a', {
      by: 'ops',
      reason: 'vendor closed the account',
      error: { message: 'account closed' },
    });
    expect(after).toMatchObject({ status: 'failed', error: { node: 'a' } });
    const events = await h.store.readHistory(run.id, 0, 100);
    expect(events.find((e) => e.type === 'task.failed_by_operator')).toMatchObject({
      nodeId: 'a',
      data: { by: 'ops', reason: 'vendor closed the account', error: { message: 'account closed' } },
    });
  });

  it('refuses with 409 and the state: a finished task, a node not started, a finished run', async () => {
    const run = await start();
    expect(await refusal(h.engine.control.skipTask(run.id, 'b', { by: 'ops' }))).toMatchObject({
      code: 'node_not_started',
      status: 409,
    });
    await h.engine.control.cancel(run.id, { by: 'ops' });
    expect(await refusal(h.engine.control.completeTask(run.id, 'a', { by: 'ops', output: 1 }))).toMatchObject(
      {
        code: 'run_not_active',
        status: 409,
        message: expect.stringContaining('is cancelled'),
      },
    );
    expect(await refusal(h.engine.control.pause(run.id, { by: 'ops' }))).toMatchObject({
      code: 'run_not_running',
      message: `run ${run.id} is cancelled; only a running run can be paused`,
    });
    expect(await refusal(h.engine.control.resume(run.id, { by: 'ops' }))).toMatchObject({
      code: 'run_not_paused',
    });
    expect(await refusal(h.engine.control.rerun(run.id, 'nope', { by: 'ops' }))).toMatchObject({
      code: 'node_not_found',
      status: 404,
    });
  });
});

describe('retry', () => {
  it('runs the failed node of a failed run again and the run completes', async () => {
    const run = await start();
    const [a] = await lease(h.engine, ['ops.a']);
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [failed(a!, 'down', false)] });
    expect((await h.engine.runs.get(run.id)).status).toBe('failed');
    const retried = await h.engine.control.retry(run.id, { by: 'ops', reason: 'vendor is back' });
    expect(retried).toMatchObject({ status: 'running', error: null, finishedAt: null });
    const [again] = await lease(h.engine, ['ops.a']);
    expect(again).toMatchObject({ nodeId: 'a', attempt: 2 });
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(again!, 1)] });
    const [b] = await lease(h.engine, ['ops.b']);
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(b!, 2)] });
    const done = await h.engine.runs.get(run.id);
    expect(done).toMatchObject({ status: 'completed', error: null, output: { b: 2 } });
    expect(await refusal(h.engine.control.retry(run.id, { by: 'ops' }))).toMatchObject({
      code: 'run_completed',
      status: 409,
    });
  });
});

describe('cancelling a paused run', () => {
  it('records what landed during the pause, and refuses the rest', async () => {
    const run = await start();
    const [a] = await lease(h.engine, ['ops.a']);
    await h.engine.control.pause(run.id, { by: 'ops' });
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(a!, 'A')] });
    await h.engine.control.terminate(run.id, { by: 'ops', reason: 'wrong customer' });
    const types = await eventually(async () => {
      const t = await history(run.id);
      return t.includes('task.completed') ? t : undefined;
    });
    expect(types.slice(-3)).toEqual(['run.paused', 'run.terminated', 'task.completed']);
    expect(await lease(h.engine, ['ops.b'])).toEqual([]);
    expect((await h.engine.runs.get(run.id)).error).toEqual({
      message: 'terminated by ops: wrong customer',
      reason: 'terminated',
    });
  });
});

describe('bulk', () => {
  it('cancels every matching run in batches, one transaction each, and reports what was refused', async () => {
    await h.engine.definitions.deploy('default', CHAIN.replace('ops-chain', 'ops-bulk'));
    const runs = [];
    for (let i = 0; i < 7; i++)
      runs.push(await h.engine.runs.start({ namespace: 'default', definition: 'ops-bulk', input: { i } }));
    await h.engine.control.cancel(runs[2]!.id, { by: 'ops' }); // already cancelled: refused
    const progress: BulkProgress[] = [];
    const result = await bulkControl(
      h.store,
      h.engine.control,
      {
        namespace: 'default',
        action: 'terminate',
        filter: { definition: 'ops-bulk' },
        by: 'ops',
        reason: 'bad deploy',
        batchSize: 3,
      },
      (p) => progress.push(p),
    );
    expect(result).toMatchObject({ matched: 7, done: 6, refused: 1, next: null, batches: 3 });
    expect(result.refusals).toEqual([
      { runId: runs[2]!.id, code: 'run_not_active', message: expect.stringContaining('already cancelled') },
    ]);
    expect(progress.map((p) => p.matched)).toEqual([3, 6, 7]);
    const statuses = await Promise.all(runs.map(async (r) => (await h.engine.runs.get(r.id)).status));
    expect(statuses.filter((s) => s === 'terminated')).toHaveLength(6);

    // A filter on status and start time; a dry run acts on nothing.
    const dry = await bulkControl(h.store, h.engine.control, {
      namespace: 'default',
      action: 'retry',
      filter: { definition: 'ops-bulk', status: 'terminated', startedAfter: new Date(Date.now() - 60_000) },
      by: 'ops',
      dryRun: true,
    });
    expect(dry).toMatchObject({ matched: 6, done: 6, refused: 0 });
    expect((await h.engine.runs.get(runs[0]!.id)).status).toBe('terminated');
    const none = await bulkControl(h.store, h.engine.control, {
      namespace: 'default',
      action: 'retry',
      filter: { definition: 'ops-bulk', startedBefore: new Date(Date.now() - 60_000) },
      by: 'ops',
    });
    expect(none.matched).toBe(0);
    const retried = await bulkControl(h.store, h.engine.control, {
      namespace: 'default',
      action: 'retry',
      filter: { definition: 'ops-bulk', status: 'terminated', version: 1 },
      by: 'ops',
    });
    expect(retried).toMatchObject({ matched: 6, done: 6, refused: 0 });
    expect((await h.engine.runs.get(runs[0]!.id)).status).toBe('running');
  });
});

describe('cascade', () => {
  it('hands what a cancel or terminate stopped to the cascader, inside the same transaction', async () => {
    const seen: StoppedRun[] = [];
    let fail = false;
    const cascader: Cascader = {
      name: 'test',
      async stop(_tx, _writes, stopped) {
        seen.push(...stopped);
        if (fail) throw new Error('child run could not be stopped');
      },
    };
    const engine = new Engine({
      store: h.store,
      cascader,
      config: { backgroundLoops: false, crossProcessWakeups: false },
    });
    const one = await start();
    await engine.control.terminate(one.id, { by: 'ops', reason: 'fraud' });
    const two = await start();
    await engine.control.cancel(two.id, { by: 'ops' });
    expect(seen).toEqual([
      { runId: one.id, mode: 'terminate', reason: 'terminated by ops: fraud' },
      { runId: two.id, mode: 'cancel', reason: 'cancelled by ops' },
    ]);
    // A cascade that fails takes the terminate with it: nothing is half done.
    fail = true;
    const three = await start();
    await expect(engine.control.terminate(three.id, { by: 'ops', reason: 'x' })).rejects.toThrow(
      /could not be stopped/,
    );
    expect((await h.engine.runs.get(three.id)).status).toBe('running');
  });
});
