import { TEST_AUTH_HEADERS } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// The HTTP API for idempotent starts, limits, the inbox, schedules, the sweeper, namespaces and large
// payloads.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ payloadThresholdBytes: 2048, maxPayloadBytes: 100 * 1024 });
  await t.call('POST', '/v1/definitions', 'name: job\nnodes:\n  - { id: a, task_type: flow.a }\n');
  await t.call(
    'POST',
    '/v1/definitions',
    `name: approve
nodes:
  - id: ok
    kind: human
    title: OK?
    input: { amount: input.amount }
    form: { type: object, required: [yes], properties: { yes: { type: boolean } } }
`,
  );
});
afterAll(async () => {
  await t?.close();
});

describe('flow control over HTTP', () => {
  it('starts idempotently: 201 then 200 with the same run; 409 when asked to refuse', async () => {
    const first = await t.call('POST', '/v1/runs', {
      definition: 'job',
      input: {},
      idempotency_key: 'order-1',
    });
    expect(first).toMatchObject({ status: 201, body: { created: true } });
    const again = await t.call(
      'POST',
      '/v1/runs',
      { definition: 'job', input: {} },
      { 'idempotency-key': 'order-1' },
    );
    expect(again).toMatchObject({ status: 200, body: { id: first.body.id, created: false } });
    const refused = await t.call('POST', '/v1/runs', {
      definition: 'job',
      input: {},
      idempotency_key: 'order-1',
      on_duplicate: 'error',
    });
    expect(refused).toMatchObject({
      status: 409,
      body: { error: { code: 'duplicate_start', details: { run_id: first.body.id } } },
    });
  });

  it('sets, lists and lifts limits', async () => {
    expect((await t.call('PUT', '/v1/limits/concurrency/flow.a', { max: 3 })).body).toMatchObject({
      kind: 'concurrency',
      name: 'flow.a',
      max: 3,
    });
    expect((await t.call('PUT', '/v1/limits/rate/mail', { max: 10, per: '1m' })).body).toMatchObject({
      per_ms: 60_000,
    });
    expect((await t.call('PUT', '/v1/limits/quota', { max: 100 })).body).toMatchObject({
      kind: 'quota',
      name: '',
    });
    expect((await t.call('PUT', '/v1/limits/rate/nowindow', { max: 10 })).body.error.code).toBe('bad_limit');
    expect((await t.call('PUT', '/v1/limits/bogus/x', { max: 1 })).status).toBe(400);
    const list = await t.call('GET', '/v1/limits');
    expect(list.body.items.map((l: any) => `${l.kind}:${l.name}`)).toEqual([
      'concurrency:flow.a',
      'quota:',
      'rate:mail',
    ]);
    expect(
      (await t.call('GET', '/v1/limits', undefined, { 'x-weft-namespace': 'other' })).body.items,
    ).toEqual([]);
    expect((await t.call('DELETE', '/v1/limits/quota')).body).toEqual({ deleted: true });
    expect((await t.call('DELETE', '/v1/limits/quota')).status).toBe(404);
    await t.call('DELETE', '/v1/limits/concurrency/flow.a');
    await t.call('DELETE', '/v1/limits/rate/mail');
  });

  it('lists, claims and completes human tasks', async () => {
    const run = await t.call('POST', '/v1/runs', { definition: 'approve', input: { amount: 12 } });
    let items: any[] = [];
    for (let i = 0; i < 100 && items.length === 0; i++) {
      items = (await t.call('GET', `/v1/inbox?run_id=${run.body.id}`)).body.items;
      if (items.length === 0) await new Promise((r) => setTimeout(r, 20));
    }
    const [task] = items;
    expect(task).toMatchObject({ title: 'OK?', input: { amount: 12 }, state: 'open', claimed_by: null });
    expect((await t.call('GET', '/v1/inbox', undefined, { 'x-weft-namespace': 'other' })).body.items).toEqual(
      [],
    );
    expect((await t.call('POST', `/v1/inbox/${task.task_id}/claim`, { user: 'ann' })).body.claimed_by).toBe(
      'ann',
    );
    expect((await t.call('POST', `/v1/inbox/${task.task_id}/claim`, { user: 'bob' })).body.error.code).toBe(
      'human_task_taken',
    );
    const bad = await t.call('POST', `/v1/inbox/${task.task_id}/complete`, {
      user: 'ann',
      data: { yes: 'y' },
    });
    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'invalid_data' } } });
    const done = await t.call('POST', `/v1/inbox/${task.task_id}/complete`, {
      user: 'ann',
      data: { yes: true },
    });
    expect(done.body).toMatchObject({ state: 'completed', data: { yes: true }, completed_by: 'ann' });
    let status = '';
    for (let i = 0; i < 100 && status !== 'completed'; i++) {
      status = (await t.call('GET', `/v1/runs/${run.body.id}`)).body.status;
      if (status !== 'completed') await new Promise((r) => setTimeout(r, 20));
    }
    expect((await t.call('GET', `/v1/runs/${run.body.id}`)).body.output).toEqual({ ok: { yes: true } });
  });

  it('creates, lists, pauses, resumes and deletes schedules', async () => {
    const made = await t.call('PUT', '/v1/schedules/nightly', {
      definition: 'job',
      cron: '0 2 * * *',
      timezone: 'Europe/Paris',
      overlap: 'buffer_one',
      input: { full: true },
    });
    expect(made).toMatchObject({
      status: 200,
      body: { name: 'nightly', timezone: 'Europe/Paris', paused: false },
    });
    expect(new Date(made.body.next_at).getUTCHours()).toBeOneOf([0, 1]);
    expect((await t.call('GET', '/v1/schedules')).body.items).toHaveLength(1);
    expect((await t.call('POST', '/v1/schedules/nightly/pause')).body.paused).toBe(true);
    expect((await t.call('POST', '/v1/schedules/nightly/resume')).body.paused).toBe(false);
    expect(
      (await t.call('PUT', '/v1/schedules/bad', { definition: 'job', cron: 'soon' })).body.error.code,
    ).toBe('bad_schedule');
    expect((await t.call('DELETE', '/v1/schedules/nightly')).body).toEqual({ deleted: true });
    expect((await t.call('GET', '/v1/schedules/nightly')).status).toBe(404);
  });

  it('shows the sweeper and runs a round on demand', async () => {
    expect((await t.call('GET', '/v1/sweeper')).body).toMatchObject({ repaired: 0, idle_ms: 300_000 });
    expect((await t.call('POST', '/v1/sweeper/run', { idle_ms: 60_000 })).body).toEqual({ repaired: [] });
    const metrics = await (await fetch(`${t.url}/metrics`, { headers: TEST_AUTH_HEADERS })).text();
    expect(Number(/^weft_sweeper_rounds_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);
    expect(metrics).toMatch(/^weft_sweeper_runs_repaired_total 0$/m);
  });

  it('scopes runs to their namespace', async () => {
    const run = await t.call('POST', '/v1/runs', { definition: 'job', input: {} });
    const other = { 'x-weft-namespace': 'other' };
    expect((await t.call('GET', `/v1/runs/${run.body.id}`, undefined, other)).status).toBe(404);
    expect((await t.call('GET', `/v1/runs/${run.body.id}/history`, undefined, other)).status).toBe(404);
    expect((await t.call('POST', `/v1/runs/${run.body.id}/cancel`, {}, other)).status).toBe(404);
    expect((await t.call('POST', `/v1/runs/${run.body.id}/pause`, {}, other)).status).toBe(404);
    expect((await t.call('POST', `/v1/runs/${run.body.id}/terminate`, { reason: 'x' }, other)).status).toBe(
      404,
    );
    expect((await t.call('GET', `/v1/runs/${run.body.id}`)).body.status).toBe('running');
  });

  it('offloads large payloads transparently and refuses those over the limit', async () => {
    const doc = 'd'.repeat(10_000);
    const run = await t.call('POST', '/v1/runs', { definition: 'job', input: { doc } });
    expect(run).toMatchObject({ status: 201, body: { input: { doc } } });
    const [row] = await t.db.sql`SELECT input FROM weft.runs WHERE id = ${run.body.id}::uuid`;
    expect(JSON.stringify(row!.input).length).toBeLessThan(200);
    expect((await t.call('GET', `/v1/runs/${run.body.id}`)).body.input).toEqual({ doc });
    const poll = await t.call('POST', '/v1/tasks/poll', {
      worker: 'w',
      task_types: ['flow.a'],
      max: 10,
      wait_ms: 0,
    });
    const mine = poll.body.tasks.find((x: any) => x.run_id === run.body.id);
    expect(mine.input).toEqual({ doc });
    const big = await t.call('POST', '/v1/runs', {
      definition: 'job',
      input: { doc: 'e'.repeat(120 * 1024) },
    });
    expect(big).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large' } } });
  });
});
