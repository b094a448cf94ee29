import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskLogsClient, WeftApiError, WeftClient } from '@weft/client';
import { TaskProtocolClient } from '@weft/client/tasks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The worker protocol is written once (`TaskCalls`) and spoken over two transports: the full client's
// (undici) and the worker's (Node's own HTTP). Both must send the same requests and read the same
// answers; a stand-in server records what each sent.

interface Seen {
  method: string;
  url: string;
  headers: Record<string, unknown>;
  body: unknown;
}

let server: Server;
let url: string;
let seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => {
      text += c.toString('utf8');
    });
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
      });
      if (req.url === '/v1/tasks/heartbeat' && text.includes('stale'))
        return void res
          .writeHead(409, { 'content-type': 'application/json' })
          .end('{"error":{"code":"lease_lost","message":"the lease is gone"}}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: req.url }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const held = { run_id: 'r1', task_id: 't1', attempt: 2, lease_token: 'l1' };
const report = { ...held, output: { ok: true } };

/** Every call of the protocol, made through one client; answers what the server sent back. */
async function everyCall(c: WeftClient | TaskProtocolClient): Promise<unknown[]> {
  return [
    await c.dispatchInfo(),
    await c.poll('w1', ['a.b'], 4, 1000),
    await c.heartbeat('w1', [held]),
    await c.report('w1', [report], { taskTypes: ['a.b'], max: 2 }),
    await c.report('w1', [report], { taskTypes: ['a.b'], max: 0 }),
    await c.leaseById('w1', ['a.b'], [{ run_id: 'r1', task_id: 't1', attempt: 2 }]),
  ];
}

describe('the worker protocol over both transports', () => {
  it('sends the same requests, with the namespace and key, and reads the same answers', async () => {
    const options = { url, namespace: 'team-a', apiKey: 'k1' };
    const full = new WeftClient(options);
    const light = new TaskProtocolClient(options);
    seen = [];
    const fullAnswers = await everyCall(full);
    const fullSent = seen;
    seen = [];
    const lightAnswers = await everyCall(light);
    expect(lightAnswers).toEqual(fullAnswers);
    const shape = (s: Seen) => ({ method: s.method, url: s.url, body: s.body });
    expect(seen.map(shape)).toEqual(fullSent.map(shape));
    expect(fullSent.map(shape)).toEqual([
      { method: 'GET', url: '/v1/tasks/dispatch', body: undefined },
      {
        method: 'POST',
        url: '/v1/tasks/poll',
        body: { worker: 'w1', task_types: ['a.b'], max: 4, wait_ms: 1000 },
      },
      { method: 'POST', url: '/v1/tasks/heartbeat', body: { worker: 'w1', tasks: [held] } },
      {
        method: 'POST',
        url: '/v1/tasks/report',
        body: { worker: 'w1', reports: [report], next: { task_types: ['a.b'], max: 2 } },
      },
      { method: 'POST', url: '/v1/tasks/report', body: { worker: 'w1', reports: [report] } },
      {
        method: 'POST',
        url: '/v1/tasks/lease',
        body: { worker: 'w1', task_types: ['a.b'], tasks: [{ run_id: 'r1', task_id: 't1', attempt: 2 }] },
      },
    ]);
    for (const s of [...fullSent, ...seen])
      expect(s.headers).toMatchObject({ 'x-weft-namespace': 'team-a', authorization: 'Bearer k1' });
    await full.close();
    await light.close();
  });

  it('turns a refusal into WeftApiError on both', async () => {
    for (const c of [new WeftClient({ url }), new TaskProtocolClient({ url })]) {
      const e = await c.heartbeat('w1', [{ ...held, lease_token: 'stale' }]).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(WeftApiError);
      expect(e).toMatchObject({ status: 409, code: 'lease_lost', message: 'the lease is gone' });
      await c.close();
    }
  });

  it('writes task logs through the same call from the logs client and the worker client', async () => {
    const lines = [{ level: 'info' as const, message: 'hello' }];
    const logs = new TaskLogsClient({ url });
    const light = new TaskProtocolClient({ url });
    seen = [];
    await logs.write(held, lines);
    await light.writeLogs(held, lines);
    const expected = {
      method: 'POST',
      url: '/v1/tasks/t1/logs',
      body: { run_id: 'r1', attempt: 2, lease_token: 'l1', lines },
    };
    expect(seen.map((s) => ({ method: s.method, url: s.url, body: s.body }))).toEqual([expected, expected]);
    await logs.close();
    await light.close();
  });
});
