import { randomUUID } from 'node:crypto';
import { TEST_AUTH_HEADERS } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

const ORDER = `
name: orders
input_schema:
  type: object
  required: [order_id]
  properties: { order_id: { type: string } }
nodes:
  - { id: reserve, task_type: api.reserve, input: { order: input.order_id } }
  - { id: ship, task_type: api.ship, input: { reservation: nodes.reserve.output.id } }
edges:
  - { from: reserve, to: ship }
`;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

async function work(type: string, output: unknown) {
  const poll = await t.call('POST', '/v1/tasks/poll', {
    worker: 'api-test',
    task_types: [type],
    max: 1,
    wait_ms: 5000,
  });
  expect(poll.status).toBe(200);
  const [task] = poll.body.tasks;
  const done = await t.call('POST', '/v1/tasks/report', {
    worker: 'api-test',
    reports: [
      {
        run_id: task.run_id,
        task_id: task.task_id,
        attempt: task.attempt,
        lease_token: task.lease_token,
        output,
      },
    ],
  });
  expect(done.body.results[0]).toEqual({ task_id: task.task_id, accepted: true });
  return task;
}

describe('definitions API', () => {
  it('deploys YAML and JSON, versions by content, and lists and reads them', async () => {
    const first = await t.call('POST', '/v1/definitions', ORDER);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ name: 'orders', version: 1, created: true });
    const same = await t.call('POST', '/v1/definitions', { source: ORDER });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ version: 1, created: false });
    const list = await t.call('GET', '/v1/definitions');
    expect(list.body.items).toContainEqual(
      expect.objectContaining({ name: 'orders', latest_version: 1, versions: 1 }),
    );
    const version = await t.call('GET', '/v1/definitions/orders/versions/latest');
    expect(version.body).toMatchObject({ name: 'orders', version: 1, source: ORDER });
    expect(version.body.definition.nodes).toHaveLength(2);
  });

  it('refuses an invalid definition with 422, every problem and its line, and stores nothing', async () => {
    const bad = await t.call(
      'POST',
      '/v1/definitions',
      'name: broken\nnodes:\n  - { id: a, task_type: t, timeout: soon }\nedges:\n  - { from: a, to: b }\n',
    );
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe('invalid_definition');
    expect(bad.body.error.details.problems).toHaveLength(2);
    expect(bad.body.error.details.problems[0]).toMatchObject({ line: 3, node: 'a' });
    expect((await t.call('GET', '/v1/definitions/broken')).status).toBe(404);
  });

  it('refuses malformed bodies with 400 and a code', async () => {
    const res = await fetch(`${t.url}/v1/definitions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...TEST_AUTH_HEADERS },
      body: '{"source": ',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.code).toBe('malformed_body');
    const empty = await t.call('POST', '/v1/definitions', { source: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe('bad_request');
  });
});

describe('runs API', () => {
  it('starts a run, checks input against the schema, and shows the run with its tasks', async () => {
    await t.call('POST', '/v1/definitions', ORDER);
    const refused = await t.call('POST', '/v1/runs', { definition: 'orders', input: { order_id: 7 } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'invalid_input' });
    expect(refused.body.error.message).toMatch(/order_id must be string/);
    const missing = await t.call('POST', '/v1/runs', { definition: 'nope' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('definition_not_found');
    const extra = await t.call('POST', '/v1/runs', { definition: 'orders', input: {}, priority: 3 });
    expect(extra.status).toBe(400);
    expect(extra.body.error.message).toMatch(/additional/);

    const started = await t.call('POST', '/v1/runs', { definition: 'orders', input: { order_id: 'o-1' } });
    expect(started.status).toBe(201);
    const runId = started.body.id;
    await work('api.reserve', { id: 'res-1' });
    await work('api.ship', { tracking: 'T-1' });
    const run = await t.call('GET', `/v1/runs/${runId}`);
    expect(run.body).toMatchObject({
      status: 'completed',
      version: 1,
      output: { ship: { tracking: 'T-1' } },
    });
    expect(run.body.tasks.map((x: { node_id: string; status: string }) => [x.node_id, x.status])).toEqual([
      ['reserve', 'completed'],
      ['ship', 'completed'],
    ]);
    expect(run.body.tasks[1].input).toEqual({ reservation: 'res-1' });
    expect(run.body.tasks[0].started_at).not.toBeNull();

    const history = await t.call('GET', `/v1/runs/${runId}/history?after=0&limit=3`);
    expect(history.body.events.map((e: { seq: number }) => e.seq)).toEqual([1, 2, 3]);
    expect(history.body.next_after).toBe(3);
    const rest = await t.call('GET', `/v1/runs/${runId}/history?after=3`);
    expect(rest.body.events.at(-1).type).toBe('run.completed');

    const cancel = await t.call('POST', `/v1/runs/${runId}/cancel`, { reason: 'too late' });
    expect(cancel.status).toBe(409);
    expect(cancel.body.error.message).toMatch(/already completed/);
  });

  it('keeps a run on the version it started on when a new version is deployed', async () => {
    await t.call('POST', '/v1/definitions', ORDER.replace('orders', 'pinned'));
    const run = await t.call('POST', '/v1/runs', { definition: 'pinned', input: { order_id: 'p' } });
    const v2 = await t.call(
      'POST',
      '/v1/definitions',
      ORDER.replace('orders', 'pinned').replace('api.ship', 'api.ship2'),
    );
    expect(v2.body.version).toBe(2);
    await work('api.reserve', { id: 'r' });
    const shown = await t.call('GET', `/v1/runs/${run.body.id}`);
    expect(shown.body.version).toBe(1);
    expect(shown.body.tasks.find((x: { node_id: string }) => x.node_id === 'ship').task_type).toBe(
      'api.ship',
    );
    const pinned = await t.call('POST', '/v1/runs', {
      definition: 'pinned',
      version: 1,
      input: { order_id: 'q' },
    });
    expect(pinned.body.version).toBe(1);
  });

  it('lists runs newest first with filters and cursor pagination', async () => {
    await t.call('POST', '/v1/definitions', ORDER.replace('orders', 'paged'));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (await t.call('POST', '/v1/runs', { definition: 'paged', input: { order_id: String(i) } })).body.id,
      );
    const page1 = await t.call('GET', '/v1/runs?definition=paged&limit=2');
    expect(page1.body.items.map((r: { id: string }) => r.id)).toEqual([ids[4], ids[3]]);
    const page2 = await t.call('GET', `/v1/runs?definition=paged&limit=2&cursor=${page1.body.next_cursor}`);
    expect(page2.body.items.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
    const page3 = await t.call('GET', `/v1/runs?definition=paged&limit=2&cursor=${page2.body.next_cursor}`);
    expect(page3.body.items.map((r: { id: string }) => r.id)).toEqual([ids[0]]);
    expect(page3.body.next_cursor).toBeNull();
    const running = await t.call('GET', '/v1/runs?definition=paged&status=running');
    expect(running.body.items).toHaveLength(5);
    expect((await t.call('GET', '/v1/runs?status=asleep')).status).toBe(400);
    expect((await t.call('GET', '/v1/runs?cursor=xyz')).body.error.code).toBe('bad_cursor');
  });

  it('serves metrics in Prometheus format', async () => {
    await t.call('POST', '/v1/definitions', ORDER.replace('orders', 'metered'));
    await t.call('POST', '/v1/runs', { definition: 'metered', input: { order_id: 'm' } });
    await work('api.reserve', { id: 'r-m' });
    // A heartbeat for a lease nobody holds is answered lost, and counted.
    const task = { run_id: randomUUID(), task_id: randomUUID(), attempt: 1, lease_token: randomUUID() };
    const beat = await t.call('POST', '/v1/tasks/heartbeat', { worker: 'w', tasks: [task] });
    expect(beat.body).toMatchObject({ held: [], lost: [task.task_id] });
    const res = await fetch(`${t.url}/metrics`, { headers: TEST_AUTH_HEADERS });
    const text = await res.text();
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    expect(text).toMatch(/^weft_runs_started_total\{namespace="default",definition="metered"\} 1$/m);
    expect(Number(/^weft_events_decided_total (\d+)$/m.exec(text)![1])).toBeGreaterThan(0);
    // Node.js's default metrics keep their standard names.
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(Number(/^weft_node_instances_read_total (\d+)$/m.exec(text)![1])).toBeGreaterThan(0);
    expect(Number(/^weft_heartbeats_refused_total (\d+)$/m.exec(text)![1])).toBeGreaterThan(0);
  });

  it('answers unknown runs and routes with 404 and a code', async () => {
    const unknown = await t.call('GET', '/v1/runs/01900000-0000-7000-8000-00000000abcd');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('run_not_found');
    expect((await t.call('GET', '/v1/runs/not-a-uuid')).body.error.code).toBe('run_not_found');
    expect((await t.call('GET', '/v1/nothing')).body.error.code).toBe('not_found');
  });
});

describe('worker protocol', () => {
  it('a waiting poll gets a new task as soon as it is queued, without polling again', async () => {
    await t.call('POST', '/v1/definitions', 'name: wake\nnodes:\n  - { id: a, task_type: api.wake }\n');
    const polling = t.call('POST', '/v1/tasks/poll', {
      worker: 'waiter',
      task_types: ['api.wake'],
      max: 1,
      wait_ms: 20_000,
    });
    // Start the run only once the poll is waiting, however long the request took to get there.
    const polls = t.server.engine.context.wakeups.polls;
    for (const end = Date.now() + 10_000; polls.size === 0 && Date.now() < end; )
      await new Promise((r) => setTimeout(r, 10));
    expect(polls.size, 'polls waiting in the server').toBe(1);
    await t.call('POST', '/v1/runs', { definition: 'wake', input: {} });
    const poll = await polling;
    // It answered with the task: a poll that was not woken answers nothing when its 20 s wait runs out.
    expect(poll.body.tasks).toHaveLength(1);
  });

  it('an empty poll waits, then answers with no tasks', async () => {
    const poll = await t.call('POST', '/v1/tasks/poll', {
      worker: 'idle',
      task_types: ['api.none'],
      max: 1,
      wait_ms: 200,
    });
    expect(poll.status).toBe(200);
    expect(poll.body).toMatchObject({ tasks: [], lease_ms: 90_000, heartbeat_ms: 30_000 });
  });

  it('validates worker requests', async () => {
    const bad = await t.call('POST', '/v1/tasks/poll', { worker: 'w', task_types: [] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/task_types/);
    const badReport = await t.call('POST', '/v1/tasks/report', {
      worker: 'w',
      reports: [{ run_id: 'x', task_id: 'y', attempt: 1, lease_token: 'z' }],
    });
    expect(badReport.status).toBe(400);
  });

  it('completes and fails one task at a time, refusing stale reports with 409', async () => {
    await t.call(
      'POST',
      '/v1/definitions',
      'name: single\nnodes:\n  - { id: a, task_type: api.single, retry: { max_attempts: 2, delay: 0s } }\n',
    );
    const run = await t.call('POST', '/v1/runs', { definition: 'single', input: {} });
    const first = (
      await t.call('POST', '/v1/tasks/poll', { worker: 'w', task_types: ['api.single'], max: 1 })
    ).body.tasks[0];
    const fail = await t.call('POST', `/v1/tasks/${first.task_id}/fail`, {
      run_id: first.run_id,
      attempt: first.attempt,
      lease_token: first.lease_token,
      error: { message: 'flaky', retryable: true },
    });
    expect(fail.body).toEqual({ task_id: first.task_id, accepted: true });
    const again = await t.call('POST', `/v1/tasks/${first.task_id}/complete`, {
      run_id: first.run_id,
      attempt: first.attempt,
      lease_token: first.lease_token,
      output: 1,
    });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('report_refused');
    const second = (
      await t.call('POST', '/v1/tasks/poll', {
        worker: 'w',
        task_types: ['api.single'],
        max: 1,
        wait_ms: 2000,
      })
    ).body.tasks[0];
    expect(second.attempt).toBe(2);
    await t.call('POST', `/v1/tasks/${second.task_id}/complete`, {
      run_id: second.run_id,
      attempt: 2,
      lease_token: second.lease_token,
      output: 'ok',
    });
    expect((await t.call('GET', `/v1/runs/${run.body.id}`)).body.status).toBe('completed');
  });
});
