import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.call(
    'POST',
    '/v1/definitions',
    'name: logged\nnodes:\n  - { id: a, task_type: logged.a }\n  - { id: b, task_type: logged.b }\nedges:\n  - { from: a, to: b }\n',
  );
});
afterAll(async () => {
  await t?.close();
});

interface Leased {
  task_id: string;
  run_id: string;
  attempt: number;
  lease_token: string;
}

async function take(type: string): Promise<Leased> {
  for (;;) {
    const poll = await t.call('POST', '/v1/tasks/poll', { worker: 'w', task_types: [type], wait_ms: 5000 });
    if (poll.body.tasks[0]) return poll.body.tasks[0];
  }
}

function writeLogs(task: Leased, lines: unknown[], token = task.lease_token) {
  return t.call('POST', `/v1/tasks/${task.task_id}/logs`, {
    run_id: task.run_id,
    attempt: task.attempt,
    lease_token: token,
    lines,
  });
}

describe('task logs over HTTP', () => {
  it('keeps what the holder writes, refuses a stale attempt with lease_lost, and reads by node and page', async () => {
    const run = (await t.call('POST', '/v1/runs', { definition: 'logged', input: {} })).body;
    const a = await take('logged.a');
    const at = '2026-01-31T12:00:00.000Z';
    const wrote = await writeLogs(a, [
      { level: 'info', message: 'charging', fields: { amount: 5 }, at },
      { level: 'warn', message: 'slow answer' },
    ]);
    expect(wrote).toEqual({ status: 200, body: { kept: 2, dropped: 0, truncated: false } });
    // The right lease named from another namespace is refused too: a key of one namespace writes to none other.
    const elsewhere = await t.call(
      'POST',
      `/v1/tasks/${a.task_id}/logs`,
      {
        run_id: a.run_id,
        attempt: a.attempt,
        lease_token: a.lease_token,
        lines: [{ level: 'info', message: 'x' }],
      },
      { 'x-weft-namespace': 'other' },
    );
    expect(elsewhere.status).toBe(409);
    const forged = await writeLogs(
      a,
      [{ level: 'info', message: 'x' }],
      '00000000-0000-4000-8000-000000000000',
    );
    expect(forged.status).toBe(409);
    expect(forged.body.error).toMatchObject({ code: 'lease_lost', message: /its log lines were not kept/ });
    const done = await t.call('POST', `/v1/tasks/${a.task_id}/complete`, {
      run_id: a.run_id,
      attempt: a.attempt,
      lease_token: a.lease_token,
      output: 1,
    });
    expect(done.status).toBe(200);
    // The attempt finished: its lease is spent, and later lines are refused.
    expect((await writeLogs(a, [{ level: 'info', message: 'after the end' }])).status).toBe(409);
    const b = await take('logged.b');
    expect((await writeLogs(b, [{ level: 'error', message: 'b failed once' }])).body.kept).toBe(1);

    const all = await t.call('GET', `/v1/runs/${run.id}/logs`);
    expect(all.status).toBe(200);
    expect(all.body.lines.map((l: { node_id: string; message: string }) => [l.node_id, l.message])).toEqual([
      ['a', 'charging'],
      ['a', 'slow answer'],
      ['b', 'b failed once'],
    ]);
    expect(all.body.lines[0]).toMatchObject({
      attempt: 1,
      level: 'info',
      fields: { amount: 5 },
      at,
      iteration: '',
    });
    expect(all.body.next_after).toBeNull();
    const onlyB = await t.call('GET', `/v1/runs/${run.id}/logs?node=b`);
    expect(onlyB.body.lines.map((l: { message: string }) => l.message)).toEqual(['b failed once']);
    const first = await t.call('GET', `/v1/runs/${run.id}/logs?limit=2`);
    expect(first.body.lines).toHaveLength(2);
    const rest = await t.call('GET', `/v1/runs/${run.id}/logs?after=${first.body.next_after}`);
    expect(rest.body.lines.map((l: { message: string }) => l.message)).toEqual(['b failed once']);
    expect((await t.call('GET', `/v1/runs/${run.id}/logs?attempt=2`)).body.lines).toEqual([]);
  });

  it('checks every value where it enters, with a JSON error', async () => {
    const run = (await t.call('POST', '/v1/runs', { definition: 'logged', input: {} })).body;
    const a = await take('logged.a');
    const badLevel = await writeLogs(a, [{ level: 'loud', message: 'x' }]);
    expect(badLevel.status).toBe(400);
    expect(badLevel.body.error.code).toBeTruthy();
    const badTime = await writeLogs(a, [{ level: 'info', message: 'x', at: 'yesterday' }]);
    expect(badTime.status).toBe(400);
    expect(badTime.body.error.message).toMatch(/lines\[0\]\.at must be a time/);
    const tooMany = await writeLogs(
      a,
      Array.from({ length: 501 }, () => ({ level: 'info', message: 'x' })),
    );
    expect(tooMany.status).toBe(400);
    expect((await t.call('GET', `/v1/runs/${run.id}/logs?limit=0`)).status).toBe(400);
    expect((await t.call('GET', `/v1/runs/${run.id}/logs?after=abc`)).status).toBe(400);
    const missing = await t.call('GET', '/v1/runs/01900000-0000-7000-8000-000000000042/logs');
    expect(missing.status).toBe(404);
    // Another namespace does not see the run.
    const elsewhere = await t.call('GET', `/v1/runs/${run.id}/logs`, undefined, {
      'x-weft-namespace': 'other',
    });
    expect(elsewhere.status).toBe(404);
  });
});
