import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { example, workUntil, workUntilDone } from '../examples.js';
import { completed, eventually, failed, lease } from '../helpers.js';
import { STORES, type StoreHarness, storeHarness } from './stores.js';

// The same engine behaviours on every store Weft ships: the Postgres store and the in-memory store.

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

describe.each(STORES)('engine on the %s store', (kind) => {
  let h: StoreHarness;
  beforeAll(async () => {
    h = await storeHarness(kind, { leaseMs: 1500, leasePollMs: 50 });
    for (const file of ['order-routing.yaml', 'invoice-batch.yaml', 'shipment-quotes.yaml'])
      await h.engine.definitions.deploy('default', example(file));
    await h.engine.definitions.deploy(
      'default',
      example('expense-approval.yaml').replace('timeout: 2d', 'timeout: 1500ms'),
    );
  });
  afterAll(async () => {
    await h?.close();
  });
  const start = (definition: string, input: object, idempotencyKey?: string) =>
    h.engine.runs.start({
      namespace: 'default',
      definition,
      input: input as never,
      ...(idempotencyKey ? { idempotencyKey } : {}),
    });

  it('deploys versions: same content same version, changed content the next', async () => {
    const first = await h.engine.definitions.deploy('default', DIAMOND);
    const again = await h.engine.definitions.deploy('default', `# same graph\n${DIAMOND}`);
    const changed = await h.engine.definitions.deploy(
      'default',
      DIAMOND.replace('name: diamond', 'name: diamond\ndescription: v2'),
    );
    expect([first.record.version, first.created, again.record.version, again.created]).toEqual([
      1,
      true,
      1,
      false,
    ]);
    expect([changed.record.version, changed.created]).toEqual([2, true]);
  });

  it('runs parallel branches and their join through leases and reports; history is gap-free', async () => {
    const run = await start('diamond', { order: 1 });
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
    // The last report asks for more work: the run has none left to give.
    const { leased } = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(d!, 'D')],
      next: { taskTypes: ['work'], max: 5 },
    });
    expect(leased).toEqual([]);
    expect(await h.engine.runs.get(run.id)).toMatchObject({ status: 'completed', output: { d: 'D' } });
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

  it('retries a failed attempt after its backoff timer and fails the run when attempts run out', async () => {
    await h.engine.definitions.deploy(
      'default',
      'name: flaky\nnodes:\n  - { id: f, task_type: flaky, retry: { max_attempts: 2, backoff: fixed, delay: 200ms } }\n',
    );
    const run = await start('flaky', {});
    const [first] = await lease(h.engine, ['flaky']);
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [failed(first!, 'bank down')],
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

  it('a lease that is not renewed expires: the next attempt runs, the late report is refused', async () => {
    await h.engine.definitions.deploy(
      'default',
      'name: lapse\nnodes:\n  - { id: a, task_type: lapse, retry: { max_attempts: 3, delay: 0s } }\n',
    );
    const run = await start('lapse', {});
    const [slow] = await lease(h.engine, ['lapse'], 1, 'slow');
    const second = await eventually(
      async () => (await lease(h.engine, ['lapse'], 1, 'fast'))[0],
      30_000,
      'attempt 2',
    );
    expect(second.attempt).toBe(2);
    const late = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'slow',
      reports: [completed(slow!, 'late')],
    });
    expect(late.verdicts[0]).toMatchObject({
      accepted: false,
      why: 'the report is for attempt 1, but attempt 2 is current',
    });
    // The fast worker reports at once; a machine stalled past its 1.5 s lease too makes it expire like the
    // first, and a later attempt is reported instead (bounded by the three attempts).
    let current = second;
    for (;;) {
      const { verdicts } = await h.engine.tasks.report({
        namespace: 'default',
        worker: 'fast',
        reports: [completed(current, 'ok')],
      });
      if (verdicts[0]!.accepted) break;
      current = await eventually(
        async () => (await lease(h.engine, ['lapse'], 1, 'fast'))[0],
        30_000,
        'another attempt',
      );
    }
    expect(await h.engine.runs.get(run.id)).toMatchObject({ status: 'completed', output: { a: 'ok' } });
    const tasks = await h.store.listTasks(run.id);
    expect(tasks[0]).toMatchObject({ attempt: 1, status: 'timed_out', error: { reason: 'lease_expired' } });
  });

  it('an attempt past its timeout is timed out and its report refused', async () => {
    await h.engine.definitions.deploy(
      'default',
      'name: slowpoke\nnodes:\n  - { id: s, task_type: slowpoke, timeout: 300ms }\n',
    );
    const run = await start('slowpoke', {});
    const [task] = await lease(h.engine, ['slowpoke']);
    const first = await eventually(
      async () => (await h.store.listTasks(run.id)).find((t) => t.attempt === 1 && t.status === 'timed_out'),
      8000,
      'the attempt to time out',
    );
    expect(first.error).toMatchObject({ reason: 'timeout' });
    const late = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(task!, 'late')],
    });
    expect(late.verdicts[0]).toMatchObject({ accepted: false, why: 'the task is already timed out' });
  });

  it('cancels a run; a report for the cancelled task is refused and recorded', async () => {
    await h.engine.definitions.deploy('default', 'name: long\nnodes:\n  - { id: l, task_type: long }\n');
    const run = await start('long', {});
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

  it('an idempotency key starts one run; a second start with it gets the same run', async () => {
    const one = await start('long', {}, 'order-7');
    const two = await start('long', {}, 'order-7');
    expect(two.id).toBe(one.id);
    expect(await h.store.countRuns('default', [one.id])).toEqual({ running: 1 });
  });

  it('switch and joins: the gold branches run, the default branch is skipped', async () => {
    const run = await start('order-routing', { order_id: 'o1', tier: 'gold', amount: 100 });
    expect(await workUntilDone(h.engine, run.id)).toMatchObject({
      status: 'completed',
      output: { order_id: 'o1', total: 90, confirmation: 'conf-o1' },
    });
    const status = Object.fromEntries((await h.store.listTasks(run.id)).map((t) => [t.nodeId, t.status]));
    expect(status).toMatchObject({
      gift_wrap: 'completed',
      express: 'completed',
      standard: 'skipped',
      confirm: 'completed',
    });
  });

  it('signals: one delivered to a waiting node decides the branch; one sent early is kept', async () => {
    const run = await start('expense-approval', { expense_id: 'e1', amount: 30 });
    await workUntil(h.engine, async () =>
      (await h.store.listTasks(run.id)).some((t) => t.nodeId === 'decision' && t.status === 'running')
        ? true
        : undefined,
    );
    const sent = await h.engine.signals.send({
      namespace: 'default',
      runId: run.id,
      name: 'decision',
      data: { approved: true, by: 'ann' },
      by: 'test',
    });
    expect(sent).toMatchObject({ outcome: 'delivered', node: 'decision' });
    expect(await workUntilDone(h.engine, run.id)).toMatchObject({
      status: 'completed',
      output: { paid: 'pay-e1' },
    });
    const early = await start('expense-approval', { expense_id: 'e2', amount: 30 });
    const kept = await h.engine.signals.send({
      namespace: 'default',
      runId: early.id,
      name: 'decision',
      data: { approved: false, by: 'bob' },
      by: 'test',
    });
    expect(kept.outcome).toBe('kept');
    expect(await workUntilDone(h.engine, early.id)).toMatchObject({
      status: 'failed',
      error: { message: 'expense e2 was refused by bob' },
    });
  });

  it('a wait for a signal that never comes takes its timeout edge (a durable timer)', async () => {
    const run = await start('expense-approval', { expense_id: 'e3', amount: 30 });
    expect(await workUntilDone(h.engine, run.id)).toMatchObject({
      status: 'failed',
      error: { message: 'no decision on expense e3 within two days' },
    });
    const decision = (await h.store.listTasks(run.id)).find((t) => t.nodeId === 'decision');
    expect(decision).toMatchObject({ status: 'completed', output: { timed_out: true } });
  });

  it('a map runs one task per item, outputs in item order, and sets a run variable', async () => {
    const customers = Array.from({ length: 12 }, (_, i) => ({ name: `c${i}`, amount: i + 1 }));
    const run = await start('invoice-batch', { customers });
    const done = await workUntilDone(h.engine, run.id);
    const output = done.output as { invoices: { customer: string }[]; summary: unknown };
    expect(output.invoices.map((i) => i.customer)).toEqual(customers.map((c) => c.name));
    expect(output.summary).toEqual({ count: 12, total: 78 });
    expect(done.vars).toEqual({ batch_total: 78 });
  });

  it('a map with a body and a join of any: each item goes on with the first answer', async () => {
    const parcels = [
      { weight: 1, to: 'Oslo' },
      { weight: 2, to: 'Rome' },
    ];
    const run = await start('shipment-quotes', { parcels });
    const done = await workUntilDone(h.engine, run.id);
    expect(done.status).toBe('completed');
    const bodies = (await h.store.listTasks(run.id)).filter((t) => t.iteration !== '');
    expect(new Set(bodies.map((t) => t.iteration.split('.')[0]))).toEqual(new Set(['0', '1']));
  });
});
