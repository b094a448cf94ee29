import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// Values PostgreSQL cannot hold (numbers past their column, text with U+0000) are refused where they enter,
// with a 400 that names the field, and never reach the database as a 500 or a crash.

const HOSTILE = `
name: hostile
nodes:
  - id: a
    task_type: hostile.a
    retry: { max_attempts: 3, delay: 10ms }
`;

let t: TestServer;
const zero = '00000000-0000-4000-8000-000000000000';
beforeAll(async () => {
  t = await startTestServer();
  expect((await t.call('POST', '/v1/definitions', HOSTILE)).status).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

/** Starts a run of `hostile` and leases its task. */
async function lease() {
  const run = await t.call('POST', '/v1/runs', { definition: 'hostile', input: {} });
  expect(run.status).toBe(201);
  for (;;) {
    const poll = await t.call('POST', '/v1/tasks/poll', {
      worker: 'w',
      task_types: ['hostile.a'],
      wait_ms: 5000,
    });
    const task = poll.body.tasks.find((x: { run_id: string }) => x.run_id === run.body.id);
    if (task) return task;
  }
}

function expectProblem(res: { status: number; body: any }, path: string, pattern: RegExp) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('bad_request');
  expect(res.body.error.message).toContain(path);
  expect(res.body.error.message).toMatch(pattern);
}

describe('numbers past their column', () => {
  it('refuses a report attempt of 2^31 or 2^53 with a 400 naming the field', async () => {
    const task = await lease();
    for (const attempt of [2 ** 31, 2 ** 53, 1e308]) {
      const res = await t.call('POST', '/v1/tasks/report', {
        worker: 'w',
        reports: [{ run_id: task.run_id, task_id: task.task_id, attempt, lease_token: zero, output: 1 }],
      });
      expectProblem(res, 'body.reports[0].attempt', /must be <= 2147483647/);
    }
    const single = await t.call('POST', `/v1/tasks/${task.task_id}/complete`, {
      run_id: task.run_id,
      attempt: 2 ** 31,
      lease_token: zero,
    });
    expectProblem(single, 'body.attempt', /must be <= 2147483647/);
  });

  it('refuses a heartbeat attempt of 2^31', async () => {
    const res = await t.call('POST', '/v1/tasks/heartbeat', {
      worker: 'w',
      tasks: [{ run_id: zero, task_id: zero, attempt: 2 ** 31, lease_token: zero }],
    });
    expectProblem(res, 'body.tasks[0].attempt', /must be <= 2147483647/);
  });

  it('refuses a start version of 1e308 or 2^53', async () => {
    for (const version of [1e308, 2 ** 53, 2 ** 31]) {
      expectProblem(
        await t.call('POST', '/v1/runs', { definition: 'hostile', version }),
        'body.version',
        /must be <= 2147483647/,
      );
    }
  });

  it('refuses numbers in query strings and paths past their column', async () => {
    const run = await t.call('POST', '/v1/runs', { definition: 'hostile', input: {} });
    for (const path of [
      `/v1/runs/${run.body.id}/history?after=99999999999999999999`,
      '/v1/runs?version=99999999999999999999',
      '/v1/runs?limit=1e3',
      '/v1/definitions/hostile/versions/99999999999999999999',
      '/v1/inbox?limit=-1',
      '/v1/dead-letters?limit=1.5',
      '/v1/workers?within_ms=1e308',
    ]) {
      const res = await t.call('GET', path);
      expect(res.status, path).toBe(400);
      expect(res.body.error.code, path).toBe('bad_request');
    }
  });
});

describe('text and JSON holding U+0000', () => {
  it('gets a 400 naming the field, wherever it enters', async () => {
    const cases: [string, string, unknown, string][] = [
      ['POST', '/v1/runs', { definition: 'hostile', input: { a: 'x\u0000y' } }, 'body.input.a'],
      ['POST', '/v1/runs', { definition: 'hostile', input: { 'k\u0000': 1 } }, 'body.input'],
      ['POST', '/v1/definitions', 'name: a\u0000b\nnodes:\n  - { id: a, task_type: x }\n', 'body'],
      [
        'POST',
        '/v1/definitions',
        'name: nul\nnodes:\n  - { id: a, task_type: x, input: { v: "\\"a\\0b\\"" } }\n',
        'definition.nodes[0].input.v',
      ],
      ['POST', '/v1/definitions', { source: 'name: a\u0000b' }, 'body.source'],
      ['POST', `/v1/runs/${zero}/signals`, { name: 'go', data: ['\u0000'] }, 'body.data[0]'],
      ['POST', `/v1/runs/${zero}/nodes/a/complete`, { output: { v: '\u0000' } }, 'body.output.v'],
      ['POST', `/v1/inbox/${zero}/complete`, { user: 'ann', data: { ok: 'n\u0000' } }, 'body.data.ok'],
      [
        'POST',
        '/v1/tasks/heartbeat',
        { worker: 'w\u0000', tasks: [{ run_id: zero, task_id: zero, attempt: 1, lease_token: zero }] },
        'body.worker',
      ],
      [
        'POST',
        '/v1/tasks/report',
        {
          worker: 'w',
          reports: [
            { run_id: zero, task_id: zero, attempt: 1, lease_token: zero, error: { message: 'a\u0000' } },
          ],
        },
        'body.reports[0].error.message',
      ],
      ['GET', '/v1/runs?definition=a%00b', undefined, 'querystring.definition'],
      ['GET', '/v1/inbox?assignee=%00', undefined, 'querystring.assignee'],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await t.call(method, path, body);
      expect(res.status, `${method} ${path} ${field}`).toBe(400);
      expect(res.body.error.code).toBe('bad_request');
      expect(res.body.error.message).toContain(field);
      expect(res.body.error.message).toMatch(/U\+0000/);
    }
  });

  it("fails the attempt of a worker's output holding U+0000 for good, and keeps the rest of the batch", async () => {
    const bad = await lease();
    const good = await lease();
    const report = (task: any, output: unknown) => ({
      run_id: task.run_id,
      task_id: task.task_id,
      attempt: task.attempt,
      lease_token: task.lease_token,
      output,
    });
    const res = await t.call('POST', '/v1/tasks/report', {
      worker: 'w',
      reports: [report(bad, { list: [{ v: 'a\u0000b' }] }), report(good, { v: 'fine' })],
    });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([
      { task_id: bad.task_id, accepted: true },
      { task_id: good.task_id, accepted: true },
    ]);
    // No retry: the same handler would send the same output again.
    const failed = await waitForRun(bad.run_id, 'failed');
    expect(failed.tasks).toHaveLength(1);
    expect(failed.tasks[0].error).toMatchObject({
      retryable: false,
      type: 'output_not_storable',
      details: { code: 'output_not_storable', path: 'output.list[0].v' },
    });
    expect(failed.tasks[0].error.message).toContain('output.list[0].v');
    const history = await t.call('GET', `/v1/runs/${bad.run_id}/history`);
    expect(JSON.stringify(history.body.events)).toContain('output_not_storable');
    const done = await waitForRun(good.run_id, 'completed');
    expect(done.output).toEqual({ a: { v: 'fine' } });
  });

  it('fails the attempt the same way through the single-task complete route', async () => {
    const task = await lease();
    const res = await t.call('POST', `/v1/tasks/${task.task_id}/complete`, {
      run_id: task.run_id,
      attempt: task.attempt,
      lease_token: task.lease_token,
      output: '\u0000',
    });
    expect(res.status).toBe(200);
    const failed = await waitForRun(task.run_id, 'failed');
    expect(failed.tasks[0].error).toMatchObject({ type: 'output_not_storable', retryable: false });
  });
});

async function waitForRun(id: string, status: string) {
  for (let i = 0; i < 600; i++) {
    const run = await t.call('GET', `/v1/runs/${id}`);
    if (run.body.status === status) return run.body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${id} never reached ${status}`);
}
