import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

const FLOW = `
name: summaries
nodes:
  - { id: shape, kind: transform, value: "{'seen': input.n}" }
`;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  expect((await t.call('POST', '/v1/definitions', FLOW)).status).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

/** Waits (at most `ms`) until `check` gives something, and returns it. */
async function until<T>(check: () => Promise<T | null | undefined | false>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('GET /v1/runs answers summaries', () => {
  it('leaves input and output out unless asked for, and gives each one asked for', async () => {
    // An input over the offload threshold (256 KB) is stored as a blob: asked for, it comes back whole.
    const big = 'x'.repeat(300_000);
    const run = await t.call('POST', '/v1/runs', { definition: 'summaries', input: { n: 7, big } });
    expect(run.status).toBe(201);
    await until(async () => (await t.call('GET', `/v1/runs/${run.body.id}`)).body.status === 'completed');

    const plain = await t.call('GET', '/v1/runs?definition=summaries');
    expect(plain.status).toBe(200);
    const summary = plain.body.items[0];
    expect(summary.id).toBe(run.body.id);
    expect(summary.status).toBe('completed');
    expect('input' in summary).toBe(false);
    expect('output' in summary).toBe(false);

    const inputs = (await t.call('GET', '/v1/runs?definition=summaries&include=input')).body.items[0];
    expect(inputs.input).toEqual({ n: 7, big });
    expect('output' in inputs).toBe(false);

    const both = (await t.call('GET', '/v1/runs?definition=summaries&include=output,input')).body.items[0];
    expect(both.input).toEqual({ n: 7, big });
    expect(both.output).toEqual({ shape: { seen: 7 } });
  });

  it('refuses an include it does not know, saying what it takes', async () => {
    const res = await t.call('GET', '/v1/runs?include=vars');
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('include');
  });
});
