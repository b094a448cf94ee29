import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { TerminalError, Worker } from '@weft/worker';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';

let t: TestServer;
beforeAll(async () => {
  // Short leases so that a dead worker's task comes back quickly; heartbeats well inside them, so that a
  // busy machine delaying one does not lose a lease.
  t = await startTestServer({ leaseMs: 3000, heartbeatMs: 250, leasePollMs: 100 });
});
afterAll(async () => {
  await t?.close();
});

async function runStatus(id: string, until: (s: string) => boolean, ms = 15_000) {
  const end = Date.now() + ms;
  for (;;) {
    const run = (await t.call('GET', `/v1/runs/${id}`)).body;
    if (until(run.status)) return run;
    if (Date.now() > end) throw new Error(`run ${id} is still ${run.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('worker SDK', () => {
  it('runs handlers within its concurrency limit and reports outputs', async () => {
    await t.call(
      'POST',
      '/v1/definitions',
      'name: sdk1\nnodes:\n  - { id: a, task_type: sdk.work, input: { n: input.n } }\n',
    );
    let running = 0;
    let peak = 0;
    const worker = new Worker({
      apiKey: TEST_ADMIN_KEY,
      url: t.url,
      concurrency: 3,
      handlers: {
        'sdk.work': async (input) => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, 30));
          running--;
          return { doubled: (input as { n: number }).n * 2 };
        },
      },
    });
    const ids = await Promise.all(
      Array.from({ length: 12 }, (_, n) =>
        t.call('POST', '/v1/runs', { definition: 'sdk1', input: { n } }).then((r) => r.body.id as string),
      ),
    );
    await worker.start();
    const runs = await Promise.all(ids.map((id) => runStatus(id, (s) => s === 'completed')));
    await worker.stop();
    expect(runs.map((r) => r.output.a.doubled)).toEqual(Array.from({ length: 12 }, (_, n) => n * 2));
    expect(peak).toBeLessThanOrEqual(3);
    expect(peak).toBeGreaterThan(1);
    expect(worker.stats.completed).toBe(12);
  });

  it('fails an attempt with the thrown error and retries it; a TerminalError fails the run at once', async () => {
    await t.call(
      'POST',
      '/v1/definitions',
      'name: sdk2\nnodes:\n  - { id: a, task_type: sdk.flaky, retry: { max_attempts: 3, delay: 0s } }\n',
    );
    await t.call(
      'POST',
      '/v1/definitions',
      'name: sdk3\nnodes:\n  - { id: a, task_type: sdk.declined, retry: { max_attempts: 3, delay: 0s } }\n',
    );
    let calls = 0;
    const worker = new Worker({
      apiKey: TEST_ADMIN_KEY,
      url: t.url,
      handlers: {
        'sdk.flaky': async (_input, ctx) => {
          calls++;
          if (ctx.attempt === 1) throw new Error('bank timeout');
          return 'paid';
        },
        'sdk.declined': async () => {
          throw new TerminalError('card declined', { code: 'do_not_honor' });
        },
      },
    });
    await worker.start();
    const flaky = (await t.call('POST', '/v1/runs', { definition: 'sdk2' })).body.id;
    const declined = (await t.call('POST', '/v1/runs', { definition: 'sdk3' })).body.id;
    const ok = await runStatus(flaky, (s) => s === 'completed');
    const bad = await runStatus(declined, (s) => s === 'failed');
    await worker.stop();
    expect(ok.tasks.map((x: { attempt: number; status: string }) => [x.attempt, x.status])).toEqual([
      [1, 'failed'],
      [2, 'completed'],
    ]);
    expect(ok.tasks[0].error).toMatchObject({ message: 'bank timeout', retryable: true, reason: 'error' });
    expect(ok.tasks[0].error.stack).toMatch(/bank timeout\n\s+at /);
    expect(calls).toBe(2);
    expect(bad.tasks).toHaveLength(1);
    expect(bad.tasks[0].error).toMatchObject({
      message: 'card declined',
      retryable: false,
      type: 'TerminalError',
      details: { code: 'do_not_honor' },
    });
    expect(bad.error.message).toBe('node "a" failed: card declined');
  });

  it('renews leases while a long task runs', async () => {
    await t.call(
      'POST',
      '/v1/definitions',
      'name: sdk4\nnodes:\n  - { id: a, task_type: sdk.slow, retry: { max_attempts: 1 } }\n',
    );
    // The handler runs until the database's clock (the one leases expire by) is a second past the expiry
    // of the lease it started with: without heartbeats the attempt would have been timed out.
    let outlived = false;
    const worker = new Worker({
      apiKey: TEST_ADMIN_KEY,
      url: t.url,
      handlers: {
        'sdk.slow': async (_input, ctx) => {
          const [first] = await t.db.sql<{ expires: Date }[]>`
            SELECT lease_expires_at AS expires FROM weft.tasks WHERE id = ${ctx.taskId}::uuid`;
          for (const end = Date.now() + 30_000; !outlived && Date.now() < end; ) {
            await new Promise((r) => setTimeout(r, 100));
            const [now] = await t.db.sql<{ past: boolean }[]>`
              SELECT now() > ${first!.expires} + interval '1 second' AS past`;
            outlived = now!.past;
          }
          return 'finally';
        },
      },
    });
    await worker.start();
    const id = (await t.call('POST', '/v1/runs', { definition: 'sdk4' })).body.id;
    const run = await runStatus(id, (s) => s !== 'running', 45_000);
    await worker.stop();
    expect(outlived, 'the handler outlived its first lease').toBe(true);
    expect(run.status).toBe('completed');
    expect(run.output).toEqual({ a: 'finally' });
    expect(run.tasks.map((x: { attempt: number }) => x.attempt)).toEqual([1]);
  });

  it('signals a handler whose lease was lost, when its run is cancelled', async () => {
    await t.call('POST', '/v1/definitions', 'name: sdk5\nnodes:\n  - { id: a, task_type: sdk.cancelled }\n');
    let aborted = false;
    let started!: () => void;
    const began = new Promise<void>((r) => (started = r));
    const worker = new Worker({
      apiKey: TEST_ADMIN_KEY,
      url: t.url,
      handlers: {
        'sdk.cancelled': (_input, ctx) =>
          new Promise((resolve) => {
            started();
            ctx.signal.addEventListener('abort', () => {
              aborted = true;
              resolve('gave up');
            });
          }),
      },
    });
    await worker.start();
    const id = (await t.call('POST', '/v1/runs', { definition: 'sdk5' })).body.id;
    await began;
    await t.call('POST', `/v1/runs/${id}/cancel`, { reason: 'customer changed their mind' });
    const end = Date.now() + 5000;
    while (!aborted && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    await worker.stop();
    expect(aborted).toBe(true);
    expect(worker.stats.refused).toBe(1);
  });

  it('holds more tasks than one request may carry: polls, reports and heartbeats go within the limits', async () => {
    // The server takes at most 500 tasks asked for by a poll or a report and 1,000 reports or heartbeats
    // a request. A worker running 1,050 tasks at once must ask, report and renew within those limits.
    // A server of its own, with leases long enough for 1,050 tasks on a slow machine and frequent heartbeats.
    const t = await startTestServer({ leaseMs: 20_000, heartbeatMs: 250 });
    onTestFinished(() => t.close());
    await t.call('POST', '/v1/definitions', 'name: sdk-wide\nnodes:\n  - { id: a, task_type: sdk.wide }\n');
    const count = 1050;
    const ids: string[] = [];
    for (let left = count; left > 0; left -= 1000) {
      const inputs = Array.from({ length: Math.min(1000, left) }, () => ({}));
      const { body } = await t.call('POST', '/v1/runs/batch', { definition: 'sdk-wide', inputs });
      ids.push(...body.items.map((i: { id: string }) => i.id));
    }
    const problems: string[] = [];
    let running = 0;
    let release: () => void = () => {};
    const allRunning = new Promise<void>((r) => (release = r));
    // One timer for all: every handler returns in the same turn, so all 1,050 reports wait to be sent.
    const finished = allRunning.then(() => new Promise((r) => setTimeout(r, 600)));
    const worker = new Worker({
      apiKey: TEST_ADMIN_KEY,
      url: t.url,
      concurrency: 1100,
      pollWaitMs: 200,
      onProblem: (message) => problems.push(message),
      handlers: {
        'sdk.wide': async () => {
          if (++running === count) release();
          // Every task waits until all are running, so they finish together, after heartbeats of all.
          await finished;
          return 'done';
        },
      },
    });
    await worker.start();
    try {
      for (const end = Date.now() + 30_000; worker.stats.completed + worker.stats.refused < count; ) {
        if (Date.now() > end) throw new Error(`only ${worker.stats.completed} of ${count} tasks completed`);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await worker.stop(1000);
    }
    expect(problems.slice(0, 3)).toEqual([]);
    expect(problems).toHaveLength(0);
    expect(worker.stats.completed).toBe(count);
    expect(worker.stats.refused).toBe(0);
    let completed = 0;
    for (let cursor = ''; ; ) {
      const page = await t.call('GET', `/v1/runs?definition=sdk-wide&status=completed&limit=500${cursor}`);
      completed += page.body.items.length;
      if (!page.body.next_cursor) break;
      cursor = `&cursor=${encodeURIComponent(page.body.next_cursor)}`;
    }
    expect(completed).toBe(count);
    expect(ids).toHaveLength(count);
  }, 60_000);

  it('stops gracefully: no new polls, in-flight tasks finish and are reported', async () => {
    await t.call('POST', '/v1/definitions', 'name: sdk6\nnodes:\n  - { id: a, task_type: sdk.drain }\n');
    let started!: () => void;
    const began = new Promise<void>((r) => (started = r));
    const worker = new Worker({
      apiKey: TEST_ADMIN_KEY,
      url: t.url,
      handlers: {
        'sdk.drain': async () => {
          started();
          await new Promise((r) => setTimeout(r, 300));
          return 'drained';
        },
      },
    });
    await worker.start();
    const first = (await t.call('POST', '/v1/runs', { definition: 'sdk6' })).body.id;
    await began;
    await worker.stop();
    expect((await t.call('GET', `/v1/runs/${first}`)).body.status).toBe('completed');
    const second = (await t.call('POST', '/v1/runs', { definition: 'sdk6' })).body.id;
    await new Promise((r) => setTimeout(r, 300));
    const run = (await t.call('GET', `/v1/runs/${second}`)).body;
    expect(run.tasks[0].status).toBe('queued');
  });

  it('a worker process killed mid-task: the lease expires, another worker retries, the run finishes', async () => {
    await t.call(
      'POST',
      '/v1/definitions',
      'name: sdk7\nnodes:\n  - { id: a, task_type: sdk.fragile, retry: { max_attempts: 3, delay: 0s } }\n',
    );
    const id = (await t.call('POST', '/v1/runs', { definition: 'sdk7' })).body.id;
    const child = spawn(
      process.execPath,
      [fileURLToPath(new URL('./fixtures/hanging-worker.mjs', import.meta.url))],
      {
        env: { ...process.env, WEFT_URL: t.url, WEFT_API_KEY: TEST_ADMIN_KEY },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        if (d.toString().startsWith('started')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`the worker exited early (${code})`)));
    });
    child.kill('SIGKILL');
    const survivor = new Worker({
      apiKey: TEST_ADMIN_KEY,
      url: t.url,
      name: 'survivor',
      handlers: { 'sdk.fragile': (_i, ctx) => `done on attempt ${ctx.attempt}` },
    });
    await survivor.start();
    const run = await runStatus(id, (s) => s !== 'running');
    await survivor.stop();
    expect(run.status).toBe('completed');
    expect(
      run.tasks.map((x: { attempt: number; status: string; worker: string }) => [
        x.attempt,
        x.status,
        x.worker,
      ]),
    ).toEqual([
      [1, 'timed_out', 'doomed-worker'],
      [2, 'completed', 'survivor'],
    ]);
    expect(run.tasks[0].error).toMatchObject({ reason: 'lease_expired', retryable: true });
    expect(run.output).toEqual({ a: 'done on attempt 2' });
  });
});

/** A leased task as a scripted server hands it out. */
function scriptedTask(taskType: string) {
  return {
    task_id: '00000000-0000-7000-8000-000000000001',
    run_id: '00000000-0000-7000-8000-000000000002',
    node_id: 'a',
    iteration: '',
    attempt: 1,
    task_type: taskType,
    definition: 'scripted',
    input: null,
    lease_token: '00000000-0000-4000-8000-000000000003',
    lease_expires_at: new Date(Date.now() + 60_000).toISOString(),
    deadline_at: null,
  };
}

/**
 * A stand-in for the server's worker protocol: polls hand out `task` once (then wait and answer none),
 * and `answer` decides what reports and heartbeats get. Closed when the test ends.
 */
async function scriptedServer(
  task: ReturnType<typeof scriptedTask>,
  answer: (path: string) => Promise<{ status: number; body: unknown }>,
): Promise<{ url: string; requests: string[] }> {
  let given = false;
  const requests: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      requests.push(req.url ?? '');
      const send = ({ status, body }: { status: number; body: unknown }) => {
        res.statusCode = status;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(body));
      };
      if (req.url === '/v1/tasks/dispatch') return send({ status: 200, body: { dispatcher: 'table' } });
      if (req.url === '/v1/tasks/poll') {
        const tasks = given ? [] : [task];
        given = true;
        if (tasks.length === 0) await new Promise((r) => setTimeout(r, 100));
        return send({ status: 200, body: { tasks, lease_ms: 60_000, heartbeat_ms: 50 } });
      }
      send(await answer(req.url ?? ''));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

describe('worker SDK against a scripted server', () => {
  it('a heartbeat answered "lost" for a task that finished meanwhile is not a lost lease', async () => {
    // The heartbeat's answer is held back until the task's report has arrived, then names the task
    // as lost (it is completed, no longer running): the report's verdict, not the heartbeat, tells.
    const task = scriptedTask('sdk.race');
    let reported: () => void = () => {};
    const reportArrived = new Promise<void>((r) => (reported = r));
    const { url } = await scriptedServer(task, async (path) => {
      if (path === '/v1/tasks/report') {
        reported();
        return { status: 200, body: { results: [{ task_id: task.task_id, accepted: true }], tasks: [] } };
      }
      await reportArrived;
      return { status: 200, body: { held: [], lost: [task.task_id] } };
    });
    const problems: string[] = [];
    const worker = new Worker({
      apiKey: TEST_ADMIN_KEY,
      url,
      pollWaitMs: 100,
      onProblem: (message) => problems.push(message),
      handlers: { 'sdk.race': () => new Promise((r) => setTimeout(() => r('done'), 150)) },
    });
    await worker.start();
    await reportArrived;
    // Long enough for the held heartbeat's answer to come back and be read.
    await new Promise((r) => setTimeout(r, 200));
    await worker.stop(1000);
    expect(worker.stats.completed).toBe(1);
    expect(problems).toEqual([]);
  });

  it('aborts the handler of a task whose heartbeat answers that its lease was lost', async () => {
    const task = scriptedTask('sdk.lost');
    const { url, requests } = await scriptedServer(task, async (path) =>
      path === '/v1/tasks/heartbeat'
        ? { status: 200, body: { held: [], lost: [task.task_id] } }
        : { status: 200, body: { results: [{ task_id: task.task_id, accepted: false }], tasks: [] } },
    );
    const problems: string[] = [];
    let reason: unknown = null;
    const worker = new Worker({
      url,
      pollWaitMs: 100,
      onProblem: (message) => problems.push(message),
      handlers: {
        // Runs until its signal fires (30 s at most, which fails the test).
        'sdk.lost': (_input, ctx) =>
          new Promise((resolve) => {
            const give = setTimeout(() => resolve('never told'), 30_000);
            ctx.signal.addEventListener('abort', () => {
              clearTimeout(give);
              reason = ctx.signal.reason;
              resolve('gave up');
            });
          }),
      },
    });
    await worker.start();
    for (const end = Date.now() + 30_000; reason === null && Date.now() < end; )
      await new Promise((r) => setTimeout(r, 20));
    await worker.stop(1000);
    expect(requests).toContain('/v1/tasks/heartbeat');
    expect(reason).toBeInstanceOf(Error);
    expect((reason as Error).message).toBe('the lease on this task was lost');
    expect(problems).toContain(`lease lost on task ${task.task_id}; its handler was signalled to stop`);
  });

  it('stop gives up on reports the server does not take, says so, and sends nothing after', async () => {
    const task = scriptedTask('sdk.unheard');
    const { url, requests } = await scriptedServer(task, async (path) =>
      path === '/v1/tasks/report'
        ? { status: 503, body: { error: { code: 'unavailable', message: 'down for maintenance' } } }
        : { status: 200, body: { held: [task.task_id], lost: [] } },
    );
    const problems: string[] = [];
    let ran: () => void = () => {};
    const handled = new Promise<void>((r) => (ran = r));
    const worker = new Worker({
      apiKey: TEST_ADMIN_KEY,
      url,
      pollWaitMs: 100,
      onProblem: (message) => problems.push(message),
      handlers: {
        'sdk.unheard': () => {
          ran();
          return 'done';
        },
      },
    });
    await worker.start();
    await handled;
    // A stop that did not give up would wait for the server forever, and the test time out.
    await worker.stop(150);
    expect(problems.at(-1)).toBe(
      'stopped with 0 handler(s) still running and 1 report(s) not taken by the server; their tasks will be retried when their leases expire',
    );
    const sent = requests.length;
    await new Promise((r) => setTimeout(r, 600));
    expect(requests.length).toBe(sent);
    expect(worker.stats.completed).toBe(0);
  });
});
