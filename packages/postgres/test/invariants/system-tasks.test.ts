import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Harness, harness } from '../helpers.js';

// Invariant 13, for the in-process system-task runner: it leases and reports through the task service like
// any worker, so its results carry the attempt and the lease's fencing token. When its lease is lost (here: a
// slow answer and a short lease), the attempt is retried, and the late result of the first attempt is refused
// and recorded instead of overwriting the retry's.

let h: Harness;
let server: Server;
let base: string;
let calls = 0;

beforeAll(async () => {
  // Heartbeats far apart and a short lease: a slow call loses its lease.
  h = await harness({ leaseMs: 400, heartbeatMs: 10_000, leasePollMs: 50 });
  server = createServer((_req, res) => {
    calls++;
    const n = calls;
    setTimeout(
      () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ n }));
      },
      n === 1 ? 1500 : 0,
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await h?.close();
  await new Promise((r) => server?.close(r));
});

describe('the system-task runner goes through leases and fencing', () => {
  it('a late result of an attempt whose lease was lost is refused; the retry wins', async () => {
    await h.engine.definitions.deploy(
      'default',
      `name: slow-call\nnodes:\n  - { id: call, kind: http, url: "'${base}/x'", retry: { max_attempts: 3, delay: 0s } }\n`,
    );
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'slow-call', input: {} });
    const done = await eventually(async () => {
      const r = await h.engine.runs.get(run.id);
      return r.status === 'running' ? undefined : r;
    });
    expect(done.status).toBe('completed');
    expect(done.output).toMatchObject({ call: { status: 200, body: { n: 2 } } });
    const history = await eventually(async () => {
      const events = await h.store.readHistory(run.id, 0, 100);
      return events.some((e) => e.type === 'task.report_refused') ? events : undefined;
    });
    const refused = history.find((e) => e.type === 'task.report_refused')!;
    expect(refused).toMatchObject({ attempt: 1, data: { report: 'complete' } });
    expect((refused.data as { worker: string }).worker).toMatch(/^weft-system@/);
    const tasks = await h.store.listTasks(run.id);
    expect(tasks.map((t) => [t.attempt, t.status])).toEqual([
      [1, 'timed_out'],
      [2, 'completed'],
    ]);
    expect(tasks[1]!.output).toMatchObject({ body: { n: 2 } });
  });
});
