import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { Worker } from '@weft/worker';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ leaseMs: 1000, heartbeatMs: 200, leasePollMs: 100 });
});
afterAll(async () => {
  await t?.close();
});

/** An HTTP server answering every request with `answer`, on a free port. */
async function httpServer(answer: (path: string) => { status: number; body: unknown }): Promise<Server> {
  const server = createServer((req, res) => {
    const { status, body } = answer(req.url ?? '');
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
  return server;
}

const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/** Resolves `promise`, or 'still waiting' after `ms` (a bound, so a hang fails the test instead of stalling it). */
const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), ms))]);

async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('worker problems', () => {
  it('start fails with a clear error when nothing answers at the url within connectTimeoutMs', async () => {
    const closed = await httpServer(() => ({ status: 200, body: {} }));
    const url = urlOf(closed);
    await new Promise<void>((r) => closed.close(() => r()));
    const logged: string[] = [];
    const worker = new Worker({
      url,
      handlers: { 'x.y': () => null },
      connectTimeoutMs: 600,
      logger: { warn: (m) => logged.push(m) },
    });
    const outcome = await within(
      worker.start().then(
        () => 'started',
        (e: Error) => e.message,
      ),
      20_000,
    );
    expect(outcome).toMatch(/could not reach the Weft server at http:\/\/127\.0\.0\.1:\d+ within 600 ms/);
    expect(outcome).toMatch(/check the worker's url/);
    // Retried several times, logged once.
    expect(logged.filter((m) => m.includes('cannot reach'))).toHaveLength(1);
  });

  it('start fails at once when the url answers but is not a Weft server', async () => {
    const other = await httpServer(() => ({ status: 404, body: { message: 'Not Found' } }));
    const worker = new Worker({ url: urlOf(other), handlers: { 'x.y': () => null }, logger: null });
    const outcome = await within(
      worker.start().then(
        () => 'started',
        (e: Error) => e.message,
      ),
      5_000,
    );
    expect(outcome).toMatch(/answered GET \/v1\/tasks\/dispatch with 404.*a Weft server's address/);
  });

  it('logs a failing poll once, and again when it works', async () => {
    let failPolls = true;
    let polls = 0;
    const flaky = await httpServer((path) => {
      if (path === '/v1/tasks/dispatch') return { status: 200, body: { dispatcher: 'table' } };
      polls++;
      if (failPolls) return { status: 503, body: { error: { code: 'unavailable', message: 'down' } } };
      return { status: 200, body: { tasks: [], lease_ms: 1000, heartbeat_ms: 500 } };
    });
    const logged: string[] = [];
    const worker = new Worker({
      url: urlOf(flaky),
      handlers: { 'x.y': () => null },
      pollWaitMs: 10,
      logger: { warn: (m) => logged.push(m) },
    });
    await worker.start();
    onTestFinished(() => worker.stop(1000));
    await until(() => polls >= 3, 'three failed polls');
    expect(logged.filter((m) => m.includes('poll failed'))).toHaveLength(1);
    failPolls = false;
    await until(() => logged.some((m) => m.includes('poll works again')), 'the recovery line');
  });

  it('logs lost leases and refused reports to the console by default, and not with logger: null', async () => {
    await t.call('POST', '/v1/definitions', 'name: lost\nnodes:\n  - { id: a, task_type: lost.slow }\n');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    onTestFinished(() => warn.mockRestore());
    const ours = () => warn.mock.calls.map((c) => String(c[0])).filter((m) => m.startsWith('weft worker'));
    let started = 0;
    const handlers = {
      // Ignores its signal and reports anyway: the report is refused.
      'lost.slow': async (_input: unknown, ctx: { signal: AbortSignal }) => {
        started++;
        await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
        return { late: true };
      },
    };
    const quiet = new Worker({ url: t.url, apiKey: TEST_ADMIN_KEY, handlers, logger: null });
    await quiet.start();
    const first = (await t.call('POST', '/v1/runs', { definition: 'lost' })).body.id as string;
    await until(() => started === 1, 'the quiet worker took the task');
    await t.call('POST', `/v1/runs/${first}/cancel`, {});
    await until(() => quiet.stats.refused === 1, 'the quiet worker report refused');
    await quiet.stop();
    expect(ours()).toEqual([]);

    const loud = new Worker({ url: t.url, apiKey: TEST_ADMIN_KEY, handlers });
    await loud.start();
    const second = (await t.call('POST', '/v1/runs', { definition: 'lost' })).body.id as string;
    await until(() => started === 2, 'the default worker took the task');
    await t.call('POST', `/v1/runs/${second}/cancel`, {});
    await until(() => loud.stats.refused === 1, 'the default worker report refused');
    await loud.stop();
    expect(ours().some((m) => /lease lost on task/.test(m))).toBe(true);
    expect(ours().some((m) => /report for task .* was refused/.test(m))).toBe(true);
  });
});
