import { isWeftError } from '@weft/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { example, exampleHandler, workUntil, workUntilDone } from './examples.js';
import { completed, type Harness, harness, lease } from './helpers.js';

// End to end on PostgreSQL, with the definitions under examples/ as they are (durations shortened where a
// test cannot wait two days).

let h: Harness;
beforeAll(async () => {
  h = await harness();
  for (const file of [
    'order-routing.yaml',
    'invoice-batch.yaml',
    'trial-reminder.yaml',
    'shipment-quotes.yaml',
  ])
    await h.engine.definitions.deploy('default', example(file));
  await h.engine.definitions.deploy(
    'default',
    example('expense-approval.yaml').replace('timeout: 2d', 'timeout: 1500ms'),
  );
  await h.engine.definitions.deploy(
    'default',
    example('report-export.yaml').replace('duration: 1s', 'duration: 100ms'),
  );
});
afterAll(async () => {
  await h?.close();
});

const start = (definition: string, input: object) =>
  h.engine.runs.start({ namespace: 'default', definition, input: input as never });

async function tasksOf(runId: string) {
  return h.store.listTasks(runId);
}

describe('switch and joins (examples/order-routing.yaml)', () => {
  it('gold: both gold branches run, the default branch is skipped, the join after the switch completes', async () => {
    const run = await start('order-routing', { order_id: 'o1', tier: 'gold', amount: 100 });
    const done = await workUntilDone(h.engine, run.id);
    expect(done).toMatchObject({
      status: 'completed',
      output: { order_id: 'o1', total: 90, confirmation: 'conf-o1' },
    });
    const tasks = await tasksOf(run.id);
    const status = Object.fromEntries(tasks.map((t) => [t.nodeId, t.status]));
    expect(status).toMatchObject({
      price: 'completed',
      route: 'completed',
      gift_wrap: 'completed',
      express: 'completed',
      standard: 'skipped',
      blocked: 'skipped',
      confirm: 'completed',
    });
  });

  it('silver goes down the default edge; blocked ends the run, failed with its reason', async () => {
    const silver = await start('order-routing', { order_id: 'o2', tier: 'silver', amount: 100 });
    expect(await workUntilDone(h.engine, silver.id)).toMatchObject({
      status: 'completed',
      output: { total: 100 },
    });
    const blocked = await start('order-routing', { order_id: 'o3', tier: 'blocked', amount: 5 });
    expect(await workUntilDone(h.engine, blocked.id)).toMatchObject({
      status: 'failed',
      error: { message: 'order o3 is from a blocked customer', node: 'blocked' },
    });
  });
});

describe('signals and wait_for_event (examples/expense-approval.yaml)', () => {
  it('a signal to the waiting node is recorded and decides the branch', async () => {
    const run = await start('expense-approval', { expense_id: 'e1', amount: 30 });
    await workUntil(h.engine, async () => {
      const tasks = await tasksOf(run.id);
      return tasks.some((t) => t.nodeId === 'decision' && t.status === 'running') ? true : undefined;
    });
    const sent = await h.engine.signals.send({
      namespace: 'default',
      runId: run.id,
      name: 'decision',
      data: { approved: true, by: 'ann' },
      by: 'test',
    });
    expect(sent).toMatchObject({ outcome: 'delivered', node: 'decision', iteration: '' });
    const done = await workUntilDone(h.engine, run.id);
    expect(done).toMatchObject({ status: 'completed', output: { expense_id: 'e1', paid: 'pay-e1' } });
    const history = await h.store.readHistory(run.id, 0, 200);
    expect(history.find((e) => e.type === 'signal.received')?.data).toMatchObject({
      signal_id: sent.signalId,
      name: 'decision',
      data: { approved: true, by: 'ann' },
      outcome: 'delivered',
      by: 'test',
    });
  });

  it('a signal sent before the wait is reached is kept, then taken; a refusal ends the run', async () => {
    const run = await start('expense-approval', { expense_id: 'e2', amount: 30 });
    const sent = await h.engine.signals.send({
      namespace: 'default',
      runId: run.id,
      name: 'decision',
      data: { approved: false, by: 'bob' },
      by: 'test',
    });
    expect(sent.outcome).toBe('kept');
    const done = await workUntilDone(h.engine, run.id);
    expect(done).toMatchObject({ status: 'failed', error: { message: 'expense e2 was refused by bob' } });
    const types = (await h.store.readHistory(run.id, 0, 200)).map((e) => e.type);
    expect(types.indexOf('signal.received')).toBeLessThan(types.indexOf('signal.delivered'));
  });

  it('no decision in time takes the timeout edge', async () => {
    const run = await start('expense-approval', { expense_id: 'e3', amount: 30 });
    const done = await workUntilDone(h.engine, run.id);
    expect(done).toMatchObject({
      status: 'failed',
      error: { message: 'no decision on expense e3 within two days' },
    });
    const tasks = await tasksOf(run.id);
    expect(tasks.find((t) => t.nodeId === 'decision')).toMatchObject({
      status: 'completed',
      output: { timed_out: true },
    });
    expect(tasks.find((t) => t.nodeId === 'remind')?.status).toBe('completed');
    expect(tasks.find((t) => t.nodeId === 'pay')?.status).toBe('skipped');
  });

  it('refuses, changing nothing: a finished run, an unknown signal name, a run that does not exist', async () => {
    const run = await start('expense-approval', { expense_id: 'e4', amount: 30 });
    const refuse = async (name: string, runId = run.id) => {
      try {
        await h.engine.signals.send({ namespace: 'default', runId, name, data: null, by: 'test' });
        return null;
      } catch (e) {
        return isWeftError(e) ? [e.code, e.status, e.message] : String(e);
      }
    };
    expect(await refuse('decisoin')).toEqual([
      'unknown_signal',
      422,
      'expense-approval v1 waits for no signal named "decisoin" (it waits for "decision")',
    ]);
    await h.engine.runs.cancel(run.id, 'test');
    const before = await h.store.readHistory(run.id, 0, 200);
    const finished = await refuse('decision');
    expect(finished?.[0]).toBe('run_finished');
    expect(finished?.[1]).toBe(409);
    expect(await h.store.readHistory(run.id, 0, 200)).toEqual(before);
    expect((await refuse('decision', '01900000-0000-7000-8000-00000000dead'))?.[0]).toBe('run_not_found');
  });
});

describe('kept signals', () => {
  it('keeps at most 100 per name and key; the next is refused and changes nothing', async () => {
    const run = await start('expense-approval', { expense_id: 'e5', amount: 30 });
    const send = (n: number) =>
      h.engine.signals.send({
        namespace: 'default',
        runId: run.id,
        name: 'decision',
        data: { n },
        by: 'test',
      });
    for (let n = 0; n < 100; n++) expect((await send(n)).outcome).toBe('kept');
    const before = await h.store.readHistory(run.id, 0, 500);
    const refused = await send(100).catch((e: unknown) => e);
    expect(isWeftError(refused, 'signal_refused')).toBe(true);
    expect((refused as Error).message).toBe(
      'the signal was refused: 100 signals named "decision" are already kept with nothing waiting for them; nothing was recorded',
    );
    expect(await h.store.readHistory(run.id, 0, 500)).toEqual(before);
    // The oldest kept signal is the one the wait takes.
    const done = await workUntilDone(h.engine, run.id);
    expect(done.status).toBe('failed');
    const tasks = await tasksOf(run.id);
    expect(tasks.find((t) => t.nodeId === 'decision')?.output).toEqual({ n: 0 });
  });
});

describe('loop (examples/report-export.yaml)', () => {
  it('polls until ready; each pass is an iteration; every pass output is reachable', async () => {
    const run = await start('report-export', { report: 'sales' });
    const done = await workUntilDone(h.engine, run.id);
    expect(done).toMatchObject({
      status: 'completed',
      output: { downloaded: 'https://files/exp-1.csv', checks: 3 },
    });
    const checks = (await tasksOf(run.id))
      .filter((t) => t.nodeId === 'check')
      .map((t) => [t.iteration, t.input]);
    expect(checks).toEqual([
      ['0', { export_id: 'exp-1', pass: 0 }],
      ['1', { export_id: 'exp-1', pass: 1 }],
      ['2', { export_id: 'exp-1', pass: 2 }],
    ]);
  });
});

describe('map (examples/invoice-batch.yaml)', () => {
  it('runs one task per item at most five at a time, outputs in item order, sets a run variable', async () => {
    const customers = Array.from({ length: 12 }, (_, i) => ({ name: `c${i}`, amount: i + 1 }));
    const run = await start('invoice-batch', { customers });
    const done = await workUntilDone(h.engine, run.id);
    expect(done.status).toBe('completed');
    const output = done.output as { invoices: { customer: string; position: number }[]; summary: unknown };
    expect(output.invoices.map((i) => i.customer)).toEqual(customers.map((c) => c.name));
    expect(output.invoices.map((i) => i.position)).toEqual(customers.map((_, i) => i));
    expect(output.summary).toEqual({ count: 12, total: 78 });
    expect(done.vars).toEqual({ batch_total: 78 });
  });

  it('an operator retry after a failure inside the map is refused with the reason; nothing changes', async () => {
    const run = await start('invoice-batch', { customers: [{ name: 'a', amount: 1 }] });
    const [task] = await lease(h.engine, ['invoices.create']);
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [
        {
          runId: task!.runId,
          taskId: task!.id,
          attempt: 1,
          leaseToken: task!.leaseToken,
          outcome: {
            kind: 'failed',
            error: { message: 'no such customer', reason: 'error', retryable: false },
          },
        },
      ],
    });
    expect((await h.engine.runs.get(run.id)).status).toBe('failed');
    const before = await h.store.readHistory(run.id, 0, 200);
    const refused = await h.engine.control.act(run.id, { kind: 'retry', by: 'ops' }).catch((e: unknown) => e);
    expect(isWeftError(refused, 'loop_or_map')).toBe(true);
    expect((refused as Error).message).toContain('retry and rerun do not re-open loops and maps');
    expect(await h.store.readHistory(run.id, 0, 200)).toEqual(before);
  });

  it('completes at once for an empty list', async () => {
    const run = await start('invoice-batch', { customers: [] });
    const done = await h.engine.runs.get(run.id);
    expect(done).toMatchObject({
      status: 'completed',
      output: { invoices: [], summary: { count: 0, total: 0 } },
    });
  });
});

describe('map with a body, join any and noop (examples/shipment-quotes.yaml)', () => {
  it('each parcel goes on with the first carrier to answer; the later answer is ignored', async () => {
    const parcels = [
      { weight: 1, to: 'Oslo' },
      { weight: 2, to: 'Lima' },
      { weight: 3, to: 'Pune' },
    ];
    const run = await start('shipment-quotes', { parcels });
    const quotes = await lease(h.engine, ['quotes.carrier_a', 'quotes.carrier_b'], 10);
    expect(quotes).toHaveLength(6);
    const one = (type: string, iteration: string) =>
      quotes.find((t) => t.taskType === type && t.iteration === iteration)!;
    const report = (...tasks: (typeof quotes)[number][]) =>
      h.engine.tasks.report({
        namespace: 'default',
        worker: 'w',
        reports: tasks.map((t) => completed(t, exampleHandler(t))),
      });
    await report(one('quotes.carrier_b', '0'));
    await report(one('quotes.carrier_a', '0')); // too late for parcel 0
    await report(one('quotes.carrier_a', '1'), one('quotes.carrier_a', '2'));
    const done = await h.engine.runs.get(run.id);
    expect(done).toMatchObject({
      status: 'completed',
      output: {
        quotes: [
          { parcel: 0, carrier: 'B', price: 6 },
          { parcel: 1, carrier: 'A', price: 9 },
          { parcel: 2, carrier: 'A', price: 11 },
        ],
        total: 26,
      },
    });
    const history = await h.store.readHistory(run.id, 0, 500);
    expect(history.filter((e) => e.type === 'join.ignored').map((e) => [e.nodeId, e.iteration])).toEqual([
      ['first_answer', '0'],
    ]);
    // The carriers that never answered were cancelled when the run completed.
    const open = (await tasksOf(run.id)).filter(
      (t) => t.taskType === 'quotes.carrier_b' && t.iteration !== '0',
    );
    expect(open.map((t) => t.status)).toEqual(['cancelled', 'cancelled']);
  });
});

describe('wait (examples/trial-reminder.yaml)', () => {
  it('waits until the time computed from the input, then goes on', async () => {
    const now = await h.store.now();
    const due = new Date(now.getTime() + 800);
    const run = await start('trial-reminder', { email: 'a@example.com', trial_ends_at: due.toISOString() });
    const done = await workUntilDone(h.engine, run.id);
    expect(done.status).toBe('completed');
    const history = await h.store.readHistory(run.id, 0, 200);
    const finished = history.find((e) => e.type === 'node.completed' && e.nodeId === 'trial');
    expect(finished!.at.getTime()).toBeGreaterThanOrEqual(due.getTime());
  });

  it('a time already past goes on at once', async () => {
    const run = await start('trial-reminder', {
      email: 'a@example.com',
      trial_ends_at: '2020-01-01T00:00:00Z',
    });
    const done = await workUntilDone(h.engine, run.id);
    expect(done.status).toBe('completed');
  });
});
