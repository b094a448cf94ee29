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
  // The local server is on loopback, which outbound calls refuse unless allow-listed.
  h = await harness({ leaseMs: 400, heartbeatMs: 10_000, leasePollMs: 50 }, { outboundAllow: '127.0.0.1' });
  server = createServer((_req, res) => {
    calls++;
    const n = calls;
    const answer = () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ n }));
    };
    // The first call answers once its attempt has been timed out (however long the lease loop took to
    // get there), so its result is late for certain; the others answer at once.
    if (n > 1) return answer();
    void eventually(
      async () => {
        const [row] = await h.db.sql<{ status: string }[]>`
          SELECT status FROM weft.tasks WHERE node_id = 'call' AND attempt = 1`;
        return row?.status === 'timed_out' ? true : undefined;
      },
      30_000,
      'the first attempt to be timed out',
    ).then(answer, (e: Error) => res.destroy(e));
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
      `name: slow-call\nnodes:\n  - { id: call, kind: http, url: "'${base}/x'", retry: { max_attempts: 5, delay: 0s } }\n`,
    );
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'slow-call', input: {} });
    const done = await eventually(async () => {
      const r = await h.engine.runs.get(run.id);
      return r.status === 'running' ? undefined : r;
    });
    expect(done.status).toBe('completed');
    const history = await eventually(async () => {
      const events = await h.store.readHistory(run.id, 0, 100);
      return events.some((e) => e.type === 'task.report_refused') ? events : undefined;
    });
    const refused = history.find((e) => e.type === 'task.report_refused')!;
    expect(refused).toMatchObject({ attempt: 1, data: { report: 'complete' } });
    expect((refused.data as { worker: string }).worker).toMatch(/^weft-system@/);
    // The retry won. On a busy machine a retry may lose its 400 ms lease too: then it is timed out like
    // the first, and a later one wins; the winner's result is the answer to its own call.
    const tasks = await h.store.listTasks(run.id);
    expect(tasks.length).toBeGreaterThanOrEqual(2);
    expect(tasks.slice(0, -1).map((t) => t.status)).toEqual(tasks.slice(0, -1).map(() => 'timed_out'));
    expect(tasks.at(-1)!.status).toBe('completed');
    expect(done.output).toMatchObject({ call: { status: 200, body: { n: tasks.length } } });
    expect(tasks.at(-1)!.output).toMatchObject({ body: { n: tasks.length } });
  });
});
