import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Destination, type OutboxRow, sinkDestination, verifyWebhook } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, type Harness, harness, lease } from './helpers.js';

/** A sink that keeps what it is given. */
function recorder(name: string): Destination & { rows: OutboxRow[] } {
  const rows: OutboxRow[] = [];
  return {
    name: sinkDestination(name),
    rows,
    async deliver(batch) {
      rows.push(...batch);
      return batch.map(() => ({ kind: 'delivered' as const }));
    },
  };
}

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let h: Harness;
let server: Server;
let base: string;
const received: Received[] = [];
const bus = recorder('bus');
const SECRET = 'test-secret';

beforeAll(async () => {
  h = await harness(
    { relayPollMs: 50, relayBackoffMs: 50 },
    { destinations: [bus], webhookSecret: SECRET, outboundAllow: '127.0.0.1' },
  );
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url?.startsWith('/status/')) {
        res.writeHead(Number(req.url.slice(8)), { 'content-type': 'application/json' });
        res.end(JSON.stringify({ said: req.url }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'x-echo': 'yes' });
      res.end(JSON.stringify({ echo: body ? JSON.parse(body) : null }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await h?.close();
  await new Promise((r) => server?.close(r));
});

async function finished(id: string) {
  return eventually(
    async () => {
      const r = await h.store.getRun(id);
      return r === null || r.status === 'running' ? undefined : r;
    },
    10_000,
    `run ${id} to finish`,
  );
}

describe('event node', () => {
  it('publishes through the outbox with a stable id and moves on', async () => {
    await h.engine.definitions.deploy(
      'default',
      `name: ev
nodes:
  - { id: tell, kind: event, sink: bus, topic: order.placed, payload: { order: input.order } }
  - { id: next, task_type: ev.next, input: { id: nodes.tell.output.event_id } }
edges:
  - { from: tell, to: next }
`,
    );
    const run = await h.engine.runs.start({
      namespace: 'default',
      definition: 'ev',
      input: { order: 'o-9' },
    });
    const row = await eventually(async () => bus.rows.find((r) => r.runId === run.id));
    expect(row.payload).toMatchObject({
      kind: 'publish',
      topic: 'order.placed',
      message: {
        type: 'order.placed',
        data: { order: 'o-9' },
        source: { namespace: 'default', run_id: run.id, definition: 'ev', node_id: 'tell', attempt: 1 },
      },
    });
    expect(row.messageId).toBe(row.payload.kind === 'publish' ? row.payload.message.id : '');
    const [next] = await lease(h.engine, ['ev.next']);
    expect(next!.input).toEqual({ id: row.messageId });
  });
});

describe('start_workflow node', () => {
  it('starts a run and completes at once with its id', async () => {
    await h.engine.definitions.deploy('default', 'name: target\nnodes:\n  - { id: only, kind: noop }\n');
    await h.engine.definitions.deploy(
      'default',
      'name: starter\nnodes:\n  - { id: go, kind: start_workflow, definition: target, input: { from: "\'starter\'" } }\n',
    );
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'starter', input: {} });
    const done = await finished(run.id);
    const childId = (done.output as { go: { run_id: string } }).go.run_id;
    const child = await finished(childId);
    expect(child).toMatchObject({
      status: 'completed',
      input: { from: 'starter' },
      parent: { runId: run.id, nodeId: 'go', attempt: 1, detached: true },
    });
  });
});

describe('http node', () => {
  it('calls the URL as a system task and its output is the response', async () => {
    await h.engine.definitions.deploy(
      'default',
      `name: call
nodes:
  - id: post
    kind: http
    method: POST
    url: "'${base}/orders/' & input.id"
    headers: { x-order: input.id }
    body: { id: input.id }
`,
    );
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'call', input: { id: 'a1' } });
    const done = await finished(run.id);
    expect(done.status).toBe('completed');
    expect(done.output).toMatchObject({
      post: { status: 200, headers: { 'x-echo': 'yes' }, body: { echo: { id: 'a1' } } },
    });
    const call = received.find((r) => r.url === '/orders/a1')!;
    expect(call).toMatchObject({
      method: 'POST',
      headers: { 'x-order': 'a1', 'content-type': 'application/json' },
    });
    // Leased and reported like any worker's task: a worker name and a fencing token on the row.
    const [row] = await h.db.sql`SELECT worker, lease_token FROM weft.tasks WHERE run_id = ${run.id}::uuid`;
    expect(row!.worker).toMatch(/^weft-system@/);
    expect(row!.leaseToken).toBeTruthy();
  });

  it('retries a 5xx and fails for good on a 4xx that is not a success code', async () => {
    await h.engine.definitions.deploy(
      'default',
      `name: flaky-call
nodes:
  - { id: c, kind: http, url: "'${base}/status/' & input.code", retry: { max_attempts: 2, delay: 0s } }
`,
    );
    const five = await h.engine.runs.start({
      namespace: 'default',
      definition: 'flaky-call',
      input: { code: 503 },
    });
    const four = await h.engine.runs.start({
      namespace: 'default',
      definition: 'flaky-call',
      input: { code: 404 },
    });
    const [a, b] = await Promise.all([finished(five.id), finished(four.id)]);
    expect(a.error?.message).toBe(`node "c" failed after 2 attempts: HTTP 503 from GET ${base}/status/503`);
    expect(b.error?.message).toBe(`node "c" failed: HTTP 404 from GET ${base}/status/404`);
  });
});

describe('status callbacks', () => {
  it('calls the definition webhook, signed, when a run ends', async () => {
    await h.engine.definitions.deploy(
      'default',
      `name: announced
on_status: { url: "${base}/hooks" }
nodes:
  - { id: w, task_type: ann.work }
`,
    );
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'announced', input: {} });
    const [task] = await lease(h.engine, ['ann.work']);
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(task!, 5)] });
    const hook = await eventually(async () => received.find((r) => r.url === '/hooks'));
    const body = JSON.parse(hook.body);
    expect(body).toMatchObject({
      type: 'run.completed',
      source: { run_id: run.id, definition: 'announced' },
      data: { status: 'completed', output: { w: 5 } },
    });
    expect(hook.headers['x-weft-id']).toBe(body.id);
    expect(verifyWebhook(SECRET, hook.body, hook.headers['x-weft-signature'] as string)).toBe(true);
    expect(verifyWebhook('wrong', hook.body, hook.headers['x-weft-signature'] as string)).toBe(false);
  });

  it('goes to a sink when the definition names one, and only for the statuses asked for', async () => {
    await h.engine.definitions.deploy(
      'default',
      `name: quiet
on_status: { sink: bus, statuses: [cancelled] }
nodes:
  - { id: w, task_type: quiet.work }
`,
    );
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'quiet', input: {} });
    await h.engine.runs.cancel(run.id, 'tester');
    const row = await eventually(async () => bus.rows.find((r) => r.runId === run.id));
    expect(row.payload).toMatchObject({ kind: 'publish', message: { type: 'run.cancelled' } });
  });
});
