import { Engine } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { buildApp } from '@weft/server';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The operator API over HTTP: status codes, error bodies that name the state, and bulk batches.

const DEF = `
name: api-ops
nodes:
  - { id: first, task_type: api.first }
  - { id: second, task_type: api.second, input: { got: nodes.first.output } }
edges:
  - { from: first, to: second }
`;

let db: TestDatabase;
let engine: Engine;
let app: FastifyInstance;

beforeAll(async () => {
  db = await createTestDatabase();
  engine = new Engine({
    store: new PgStore(db.pool(4)),
    config: { decidePollMs: 20, crossProcessWakeups: false },
  });
  await engine.start();
  // Route behaviour, in process: who may call is authorization.test.ts's subject.
  app = buildApp({ engine, auth: { mode: 'off' } });
  await engine.definitions.deploy('default', DEF);
});
afterAll(async () => {
  await app?.close();
  await engine?.stop();
  await db?.drop();
});

async function post(url: string, payload?: unknown) {
  const res = await app.inject({
    method: 'POST',
    url,
    ...(payload !== undefined ? { payload: payload as object } : {}),
  });
  return { status: res.statusCode, body: res.json() };
}

async function startRun(): Promise<string> {
  return (await post('/v1/runs', { definition: 'api-ops', input: {} })).body.id;
}

describe('operator actions over HTTP', () => {
  it('pauses, resumes and terminates, answering with the run; 409 names the state', async () => {
    const id = await startRun();
    expect(await post(`/v1/runs/${id}/pause`, { reason: 'investigating', by: 'alice' })).toMatchObject({
      status: 200,
      body: { id, status: 'paused' },
    });
    expect(await post(`/v1/runs/${id}/pause`)).toMatchObject({
      status: 409,
      body: {
        error: {
          code: 'run_not_running',
          message: `run ${id} is paused; only a running run can be paused`,
          details: { status: 'paused' },
        },
      },
    });
    expect(await post(`/v1/runs/${id}/resume`, {})).toMatchObject({
      status: 200,
      body: { status: 'running' },
    });
    expect(await post(`/v1/runs/${id}/terminate`, {})).toMatchObject({
      status: 400,
      body: { error: { code: 'bad_request' } },
    });
    expect(await post(`/v1/runs/${id}/terminate`, { reason: 'wrong input' })).toMatchObject({
      status: 200,
      body: { status: 'terminated', error: { message: 'terminated by api: wrong input' } },
    });
    expect(await post(`/v1/runs/${id}/retry`)).toMatchObject({ status: 200, body: { status: 'running' } });
    const events = (await app.inject({ method: 'GET', url: `/v1/runs/${id}/history` })).json().events;
    expect(events.map((e: { type: string }) => e.type)).toEqual(
      expect.arrayContaining(['run.paused', 'run.resumed', 'run.terminated', 'run.retried']),
    );
    expect(events.find((e: { type: string }) => e.type === 'run.paused').data).toEqual({
      by: 'alice',
      reason: 'investigating',
    });
  });

  it('completes, skips and fails tasks by hand, and reruns a finished run from a node', async () => {
    const id = await startRun();
    expect(
      await post(`/v1/runs/${id}/nodes/first/complete`, { output: { n: 1 }, reason: 'by phone' }),
    ).toMatchObject({
      status: 200,
    });
    expect(await post(`/v1/runs/${id}/nodes/first/skip`)).toMatchObject({
      status: 409,
      body: { error: { code: 'task_not_open' } },
    });
    expect(await post(`/v1/runs/${id}/nodes/nope/skip`)).toMatchObject({
      status: 404,
      body: { error: { code: 'node_not_found' } },
    });
    expect(await post(`/v1/runs/${id}/nodes/second/complete`, {})).toMatchObject({ status: 400 });
    expect(await post(`/v1/runs/${id}/nodes/second/skip`, { output: 'skipped' })).toMatchObject({
      status: 200,
      body: { status: 'completed' },
    });
    expect(await post(`/v1/runs/${id}/rerun`, { node: 'second', reason: 'redo' })).toMatchObject({
      status: 200,
      body: { status: 'running', finished_at: null, output: null },
    });
    expect(
      await post(`/v1/runs/${id}/nodes/second/fail`, {
        error: { message: 'gave up' },
        reason: 'vendor down',
      }),
    ).toMatchObject({ status: 200, body: { status: 'failed' } });
    const run = (await app.inject({ method: 'GET', url: `/v1/runs/${id}` })).json();
    expect(
      run.tasks.map(
        (t: { node_id: string; attempt: number; status: string }) => `${t.node_id}${t.attempt}:${t.status}`,
      ),
    ).toEqual(['first1:completed', 'second1:skipped', 'second2:failed']);
    expect(await post('/v1/runs/not-a-uuid/pause')).toMatchObject({ status: 404 });
  });
});

describe('bulk over HTTP', () => {
  it('goes batch by batch with a cursor and sums up what was done and refused', async () => {
    await engine.definitions.deploy('default', DEF.replace('api-ops', 'api-bulk'));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await post('/v1/runs', { definition: 'api-bulk' })).body.id);
    await post(`/v1/runs/${ids[1]}/cancel`, { reason: 'early' });
    const list = await app.inject({
      method: 'GET',
      url: '/v1/runs?definition=api-bulk&version=1&status=running',
    });
    expect(list.json().items).toHaveLength(4);

    let cursor: string | null = null;
    const done: string[] = [];
    const refused: { run_id: string; code: string }[] = [];
    let calls = 0;
    do {
      const { status, body } = await post('/v1/runs/bulk', {
        action: 'cancel',
        filter: { definition: 'api-bulk', started_after: '2000-01-01T00:00:00Z' },
        reason: 'bad deploy',
        batch_size: 2,
        ...(cursor ? { cursor } : {}),
      });
      expect(status).toBe(200);
      done.push(...body.done_ids);
      refused.push(...body.refusals);
      cursor = body.next_cursor;
      calls++;
    } while (cursor);
    expect(calls).toBe(3);
    expect(done.sort()).toEqual(ids.filter((id) => id !== ids[1]).sort());
    expect(refused).toEqual([
      { run_id: ids[1], code: 'run_not_active', message: expect.stringContaining('cancelled') },
    ]);
    expect(await post('/v1/runs/bulk', { action: 'terminate', filter: {} })).toMatchObject({
      status: 400,
      body: { error: { code: 'reason_required' } },
    });
    expect(await post('/v1/runs/bulk', { action: 'retry', filter: { version: 2 } })).toMatchObject({
      status: 400,
    });
  });
});
