import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { WeftApiError, WeftClient } from '@weft/client';
import { type RunningServer, serve } from '@weft/server';
import { createTestDatabase, TEST_ADMIN_KEY, TEST_ADMIN_NAME, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Signals over HTTP (POST /v1/runs/{id}/signals), through the typed client and the `weft signal` command.

const run = promisify(execFile);
const cli = new URL('../../cli/dist/main.js', import.meta.url).pathname;
const approval = readFileSync(new URL('../../../examples/expense-approval.yaml', import.meta.url), 'utf8');

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
  await client.deploy(approval);
});
afterAll(async () => {
  await client?.close();
  await server?.close();
  await db?.drop();
});

async function refused(p: Promise<unknown>): Promise<[number, string, string]> {
  try {
    await p;
  } catch (e) {
    if (e instanceof WeftApiError) return [e.status, e.code, e.message];
    throw e;
  }
  throw new Error('expected the request to be refused');
}

describe('signals over HTTP', () => {
  it('keeps a signal sent before the wait, then the wait takes it', async () => {
    const r = await client.startRun('expense-approval', { expense_id: 'h1', amount: 5 });
    const sent = await client.signal(r.id, 'decision', { approved: true, by: 'http' });
    expect(sent).toMatchObject({ outcome: 'kept' });
    expect(sent.signal_id).toMatch(/^[0-9a-f-]{36}$/);
    const history = await client.history(r.id);
    expect(history.events.at(-1)).toMatchObject({
      type: 'signal.received',
      data: { name: 'decision', outcome: 'kept', by: TEST_ADMIN_NAME, data: { approved: true, by: 'http' } },
    });
  });

  it('refuses bad requests, unknown names and finished runs with a clear error', async () => {
    const r = await client.startRun('expense-approval', { expense_id: 'h2', amount: 5 });
    const raw = await fetch(`${server.url}/v1/runs/${r.id}/signals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_ADMIN_KEY}` },
      body: JSON.stringify({ data: {} }),
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({ error: { code: 'bad_request' } });
    expect(await refused(client.signal(r.id, 'decisions'))).toEqual([
      422,
      'unknown_signal',
      'expense-approval v1 waits for no signal named "decisions" (it waits for "decision")',
    ]);
    await client.cancelRun(r.id, 'test');
    const [status, code] = await refused(client.signal(r.id, 'decision'));
    expect([status, code]).toEqual([409, 'run_finished']);
    expect((await refused(client.signal('not-a-run', 'decision')))[0]).toBe(404);
  });

  it('weft signal RUN NAME --data JSON delivers to the waiting node', async () => {
    const r = await client.startRun('expense-approval', { expense_id: 'h3', amount: 5 });
    const { tasks } = await client.poll('cli-test', ['expenses.submit'], 10, 1000);
    const mine = tasks.find((t) => t.run_id === r.id)!;
    await client.report('cli-test', [
      {
        run_id: r.id,
        task_id: mine.task_id,
        attempt: 1,
        lease_token: mine.lease_token,
        output: { submitted: 'h3' },
      },
    ]);
    const { stdout } = await run(process.execPath, [
      cli,
      'signal',
      r.id,
      'decision',
      '--data',
      '{"approved": true, "by": "cli"}',
      '--url',
      server.url,
      '--api-key',
      TEST_ADMIN_KEY,
    ]);
    expect(stdout).toMatch(/^signal decision \([0-9a-f-]{36}\) delivered to node decision\n$/);
    const after = await client.getRun(r.id);
    expect(after.tasks.find((t) => t.node_id === 'decision')).toMatchObject({
      status: 'completed',
      output: { approved: true, by: 'cli' },
    });
    const bad = await run(process.execPath, [
      cli,
      'signal',
      r.id,
      'decision',
      '--data',
      '{oops',
      '--url',
      server.url,
    ]).catch((e: { code: number; stderr: string }) => e);
    expect(bad).toMatchObject({ code: 2 });
    expect((bad as { stderr: string }).stderr).toContain('--data is not valid JSON');
  });
});
