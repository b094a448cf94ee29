// Every example definition in this folder, validated, deployed to a real Weft server on PostgreSQL and
// run to the end: a worker (over HTTP) for its task types, a signal for wait_for_event, an answer in the
// inbox for human, a webhook receiver for the event sink and an address API for http, both local HTTP
// servers this test starts. Each run's final status and output are checked.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Run, WeftApiError, WeftClient } from '@weft/client';
import { allNodes, formatProblem, type NodeKind, parseDefinition } from '@weft/core';
import { FolderBlobStore } from '@weft/engine';
import { type RunningServer, serve } from '@weft/server';
import { createTestDatabase, TEST_ADMIN_KEY, type TestDatabase } from '@weft/testing';
import { Worker } from '@weft/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from './example-handlers.mjs';

const folder = new URL('./', import.meta.url);
const files = readdirSync(folder)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const source = (file: string) => readFileSync(new URL(file, folder), 'utf8');

/** What the local HTTP server received: webhook messages, and address checks per order. */
const received = {
  events: [] as { headers: IncomingMessage['headers']; body: { id: string; type: string; data: unknown } }[],
  checks: new Map<string, number>(),
};
let outside: Server;
let outsideUrl: string;
let db: TestDatabase;
let server: RunningServer;
let client: WeftClient;
let worker: Worker;

beforeAll(async () => {
  outside = createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const body = text ? JSON.parse(text) : null;
    if (req.url === '/events') {
      received.events.push({ headers: req.headers, body });
      res.writeHead(204).end();
      return;
    }
    // The address API: unavailable on an order's first call, like a service that is restarting.
    const order = String(req.headers['x-order-id']);
    const calls = (received.checks.get(order) ?? 0) + 1;
    received.checks.set(order, calls);
    if (calls === 1) {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"restarting"}');
      return;
    }
    const normalized = { ...body.address, street: String(body.address.street).toUpperCase(), valid: true };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ normalized }));
  });
  await new Promise<void>((resolve) => outside.listen(0, '127.0.0.1', resolve));
  outsideUrl = `http://127.0.0.1:${(outside.address() as AddressInfo).port}`;
  db = await createTestDatabase();
  server = await serve({
    databaseUrl: db.url,
    port: 0,
    logLevel: 'silent',
    poolSize: 8,
    engine: { decidePollMs: 50, timerPollMs: 50, leasePollMs: 100, relayPollMs: 50 },
    blobs: new FolderBlobStore(mkdtempSync(join(tmpdir(), 'weft-examples-'))),
    sinks: [{ kind: 'webhook', name: 'order-events', url: `${outsideUrl}/events`, timeoutMs: 5000 }],
    // The stand-in for the outside world listens on loopback, which outbound calls refuse unless opened.
    outboundAllow: '127.0.0.1',
    auth: { bootstrapAdminKey: TEST_ADMIN_KEY },
  });
  client = new WeftClient({ url: server.url, apiKey: TEST_ADMIN_KEY });
  worker = new Worker({
    url: server.url,
    apiKey: TEST_ADMIN_KEY,
    handlers,
    concurrency: 20,
    pollWaitMs: 1000,
    name: 'examples',
  });
  await worker.start();
  // A sub_workflow and a start_workflow name definitions that must be deployed first.
  for (const file of ['payment.yaml', 'trial-reminder.yaml', ...files]) await client.deploy(source(file));
});

afterAll(async () => {
  await worker?.stop();
  await server?.close();
  await db?.drop();
  await new Promise((resolve) => outside?.close(resolve));
});

const FINAL = ['completed', 'failed', 'cancelled', 'terminated'];

/**
 * Waits (at most `ms`) for a run to end, and returns it. A run started by another run's start_workflow
 * leaves through the outbox after its parent's decision, so it may not exist yet: 404 is waited out too.
 */
async function ended(id: string, ms = 30_000): Promise<Run> {
  const until = Date.now() + ms;
  for (;;) {
    const run = await client.getRun(id).catch((e: unknown) => {
      if (e instanceof WeftApiError && e.status === 404) return undefined;
      throw e;
    });
    if (run && FINAL.includes(run.status)) return run;
    if (Date.now() > until)
      throw new Error(`run ${id} is still ${run?.status ?? 'not started'} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits (at most `ms`) until `find` gives a value. */
async function waitFor<T>(what: string, find: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const found = await find();
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error(`no ${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function run(definition: string, input: unknown): Promise<Run> {
  const started = await client.startRun(definition, input as never);
  return ended(started.id);
}

const soon = () => new Date(Date.now() + 1000).toISOString();

describe('the example definitions', () => {
  it('each says what it shows, validates, and together they use every node kind', () => {
    const kinds = new Set<NodeKind>();
    for (const file of files) {
      const text = source(file);
      expect(text.startsWith('# '), `${file} starts with a comment line saying what it shows`).toBe(true);
      const parsed = parseDefinition(text);
      if (!parsed.ok) throw new Error(`${file}:\n${parsed.error.map(formatProblem).join('\n')}`);
      for (const { node } of allNodes(parsed.value.nodes)) kinds.add(node.kind);
    }
    expect([...kinds].sort()).toEqual(
      [
        'task',
        'noop',
        'human',
        'switch',
        'wait',
        'wait_for_event',
        'loop',
        'map',
        'transform',
        'terminate',
        'sub_workflow',
        'start_workflow',
        'event',
        'http',
      ].sort(),
    );
  });
});

describe('examples of tasks, branches and waits', () => {
  it('order-fulfilment: tasks in parallel and a join', async () => {
    const order = { order_id: 'A-1', email: 'ann@example.com', amount: 42, items: [{ sku: 'tea', qty: 2 }] };
    const done = await run('order-fulfilment', order);
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ order_id: 'A-1', payment: 'pay-A-1', tracking: 'TRK-A-1' });
  });

  it('order-routing: a switch, a transform, a join after the switch, and a terminate', async () => {
    const gold = await run('order-routing', { order_id: 'R-1', tier: 'gold', amount: 100 });
    expect(gold.status).toBe('completed');
    expect(gold.output).toEqual({ order_id: 'R-1', total: 90, confirmation: 'conf-R-1' });
    const blocked = await run('order-routing', { order_id: 'R-2', tier: 'blocked', amount: 100 });
    expect(blocked.status).toBe('failed');
    expect(blocked.error?.message).toBe('order R-2 is from a blocked customer');
  });

  it('expense-approval: wait_for_event takes the decision sent as a signal', async () => {
    const started = await client.startRun('expense-approval', { expense_id: 'E-1', amount: 80 });
    await client.signal(started.id, 'decision', { approved: true, by: 'ann' });
    const done = await ended(started.id);
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ expense_id: 'E-1', paid: 'pay-E-1' });
  });

  it('trial-reminder: a wait until a time from the input', async () => {
    const done = await run('trial-reminder', { email: 'bo@example.com', trial_ends_at: soon() });
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ reminder: { sent: true, to: 'bo@example.com', template: 'trial-ended' } });
  });
});

describe('examples of loops and maps', () => {
  it('report-export: a loop of a wait and a check, until the export is ready', async () => {
    const done = await run('report-export', { report: 'sales' });
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ downloaded: 'https://files.example.com/exp-sales.csv', checks: 3 });
  });

  it('invoice-batch: a map of tasks and a transform that sets variables', async () => {
    const customers = [
      { name: 'acme', amount: 5 },
      { name: 'globex', amount: 7 },
    ];
    const done = await run('invoice-batch', { customers });
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({
      invoices: [
        { invoice_id: 'inv-0', customer: 'acme', amount: 5, position: 0 },
        { invoice_id: 'inv-1', customer: 'globex', amount: 7, position: 1 },
      ],
      summary: { count: 2, total: 12 },
    });
  });

  it('shipment-quotes: a map whose body joins two carriers at a join-any noop', async () => {
    const parcels = [
      { weight: 1, to: 'Lyon' },
      { weight: 3, to: 'Oslo' },
    ];
    const done = await run('shipment-quotes', { parcels });
    expect(done.status).toBe('completed');
    const { quotes, total } = done.output as {
      quotes: { parcel: number; carrier: string; price: number }[];
      total: number;
    };
    // Whichever carrier answered first for each parcel, its own price.
    expect(quotes.map((q) => q.parcel)).toEqual([0, 1]);
    quotes.forEach((q, i) => {
      const weight = parcels[i]!.weight;
      expect(q.price).toBe(q.carrier === 'A' ? 5 + weight * 2 : 4 + weight * 2);
    });
    expect(total).toBe(quotes[0]!.price + quotes[1]!.price);
  });
});

describe('examples that wait for people or reach outside the run', () => {
  it('refund-approval: a human task answered in the inbox', async () => {
    const started = await client.startRun('refund-approval', { order_id: 'O-7', amount: 30 });
    const task = await waitFor('inbox task', async () => {
      const { items } = await client.inbox({ run_id: started.id });
      return items[0];
    });
    expect(task).toMatchObject({
      title: 'Approve a refund',
      assignees: ['finance'],
      input: { order_id: 'O-7', amount: 30 },
    });
    await client.claimHumanTask(task.task_id, 'carla');
    await client.completeHumanTask(task.task_id, 'carla', { approved: true, note: 'damaged in transit' });
    const done = await ended(started.id);
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ order_id: 'O-7', refund_id: 'ref-O-7', note: 'damaged in transit' });
  });

  it('checkout: a sub_workflow (payment) and an event published to a webhook sink', async () => {
    const done = await run('checkout', { order_id: 'C-3', amount: 25, items: [{ sku: 'mug', qty: 1 }] });
    expect(done.status).toBe('completed');
    const output = done.output as Record<string, string>;
    expect(output).toMatchObject({ order_id: 'C-3', payment_id: 'pay-C-3', tracking: 'TRK-C-3' });
    const children = await client.listRuns({ definition: 'payment', include: ['output'] });
    const child = children.items.find((r) => r.parent?.run_id === done.id);
    expect(child).toMatchObject({ status: 'completed', output: { payment_id: 'pay-C-3', amount: 25 } });
    const event = await waitFor('published event', async () =>
      received.events.find((e) => e.body.id === output.event_id),
    );
    expect(event.headers['x-weft-type']).toBe('order.shipped');
    expect(event.body).toMatchObject({
      type: 'order.shipped',
      data: { order_id: 'C-3', tracking: 'TRK-C-3' },
    });
  });

  it('signup: a start_workflow that starts the trial reminder and does not wait for it', async () => {
    const done = await run('signup', { email: 'dee@example.com', trial_ends_at: soon() });
    expect(done.status).toBe('completed');
    const output = done.output as { account_id: string; reminder_run: string };
    expect(output.account_id).toBe('acct-dee@example.com');
    const reminder = await ended(output.reminder_run);
    expect(reminder).toMatchObject({ definition: 'trial-reminder', status: 'completed' });
    expect(reminder.parent).toMatchObject({ run_id: done.id, node_id: 'remind', detached: true });
  });

  it('signup: an event starts it once per address, and only for a trial plan', async () => {
    const data = { email: 'eve@example.com', plan: 'trial', trial_ends_at: soon() };
    const sent = await client.emit('user.registered', data, { id: 'reg-1' });
    expect(sent.runs).toEqual([expect.objectContaining({ definition: 'signup', created: true })]);
    const again = await client.emit('user.registered', data, { id: 'reg-2' });
    expect(again.runs).toEqual([{ ...sent.runs[0]!, created: false, status: expect.any(String) }]);
    const done = await ended(sent.runs[0]!.run_id);
    expect(done).toMatchObject({ status: 'completed', input: { email: data.email } });
    const enterprise = await client.emit('user.registered', {
      ...data,
      email: 'big@example.com',
      plan: 'enterprise',
    });
    expect(enterprise.runs).toEqual([]);
  });

  it('address-check: an http node retries a 503 and reads the JSON answer', async () => {
    const address = { street: '1 rue de la paix', city: 'Paris' };
    const done = await run('address-check', { order_id: 'H-9', address, address_api: outsideUrl });
    expect(done.status).toBe('completed');
    const normalized = { street: '1 RUE DE LA PAIX', city: 'Paris', valid: true };
    expect(done.output).toEqual({ order_id: 'H-9', address: normalized, label: 'lbl-H-9' });
    expect(received.checks.get('H-9')).toBe(2);
  });
});
