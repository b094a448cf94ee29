import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { WeftClient } from '@weft/client';
import { type RunningServer, serve } from '@weft/server';
import { createTestDatabase, TEST_ADMIN_KEY, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Events over HTTP (POST /v1/events), through the typed client and the `weft emit` command.

const run = promisify(execFile);
const cli = new URL('../../cli/dist/main.js', import.meta.url).pathname;

let db: TestDatabase;
let server: RunningServer;
let client: WeftClient;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await serve({
    databaseUrl: db.url,
    port: 0,
    logLevel: 'silent',
    poolSize: 4,
    migrate: false,
    auth: { bootstrapAdminKey: TEST_ADMIN_KEY },
  });
  client = new WeftClient({ url: server.url, apiKey: TEST_ADMIN_KEY });
  await client.deploy(`name: pack
input_schema: { type: object, required: [order] }
triggers: [{ event: order.paid, input: { order: data.order } }]
nodes: [{ id: a, task_type: ev.pack }]
`);
  await client.deploy(`name: invoice
triggers: [{ event: order.paid, filter: "data.amount >= 100" }]
nodes: [{ id: a, task_type: ev.invoice }]
`);
});
afterAll(async () => {
  await client?.close();
  await server?.close();
  await db?.drop();
});

describe('events over HTTP', () => {
  it('starts every matching definition, and a repeated id answers the same runs', async () => {
    const sent = await client.emit('order.paid', { order: 'A1', amount: 120 }, { id: 'pay-1' });
    expect(sent.event).toEqual({ id: 'pay-1', name: 'order.paid' });
    expect(sent.failures).toEqual([]);
    expect(sent.runs.map((r) => [r.definition, r.version, r.created])).toEqual([
      ['invoice', 1, true],
      ['pack', 1, true],
    ]);
    const pack = await client.getRun(sent.runs.find((r) => r.definition === 'pack')!.run_id);
    expect(pack.input).toEqual({ order: 'A1' });
    const again = await client.emit('order.paid', { order: 'A1', amount: 120 }, { id: 'pay-1' });
    expect(again.runs.map((r) => [r.run_id, r.created])).toEqual(sent.runs.map((r) => [r.run_id, false]));
  });

  it('answers a definition that cannot start as a failure, and starts the others', async () => {
    const sent = await client.emit('order.paid', { amount: 500 }, { id: 'pay-2' });
    expect(sent.runs.map((r) => r.definition)).toEqual(['invoice']);
    expect(sent.failures).toEqual([
      {
        definition: 'pack',
        version: 1,
        error: { code: 'trigger_failed', message: expect.stringContaining('data.order') },
      },
    ]);
  });

  it('refuses a bad event name or id with a 400 that says what is wrong', async () => {
    for (const body of [{ name: 'bad name' }, { name: 'ok', id: '' }, { name: 'ok', extra: 1 }]) {
      const error = await fetch(`${server.url}/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_ADMIN_KEY}` },
        body: JSON.stringify(body),
      });
      expect(error.status).toBe(400);
      expect(await error.json()).toMatchObject({
        error: { code: 'bad_request', message: expect.stringContaining('the request body') },
      });
    }
    await expect(client.emit('nobody.listens')).resolves.toMatchObject({ runs: [], failures: [] });
  });

  it('weft emit sends an event and lists the runs it started', async () => {
    const env = { ...process.env, WEFT_URL: server.url, WEFT_API_KEY: TEST_ADMIN_KEY };
    const args = [cli, 'emit', 'order.paid', '--id', 'cli-1', '--data', '{"order": "C1", "amount": 5}'];
    const first = await run('node', args, { env });
    expect(first.stdout).toMatch(/event order\.paid \(cli-1\): 1 run\(s\)/);
    expect(first.stdout).toMatch(/pack v1: run \S+ .*\(started\)/);
    const second = await run('node', args, { env });
    expect(second.stdout).toMatch(/already started by this event id/);
  });
});
