import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

const FLOW = `
name: tagged-api
nodes:
  - { id: tag, kind: transform, value: "1", attributes: { stage: "'done'" } }
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

describe('search attributes over HTTP', () => {
  it('are given at start, shown with the run, and filter lists and counts with ?attr=name:value', async () => {
    const a = await t.call('POST', '/v1/runs', {
      definition: 'tagged-api',
      attributes: { customer: 42, vip: true },
    });
    const b = await t.call('POST', '/v1/runs', {
      definition: 'tagged-api',
      attributes: { customer: 'acme:eu' },
    });
    expect(a.status).toBe(201);
    for (const r of [a, b])
      await until(async () => (await t.call('GET', `/v1/runs/${r.body.id}`)).body.status === 'completed');
    const shown = await t.call('GET', `/v1/runs/${a.body.id}`);
    expect(shown.body.attributes).toEqual({ customer: 42, vip: true, stage: 'done' });

    const byCustomer = await t.call('GET', '/v1/runs?attr=customer:42');
    expect(byCustomer.body.items.map((r: any) => r.id)).toEqual([a.body.id]);
    expect(byCustomer.body.items[0].attributes).toEqual({ customer: 42, vip: true, stage: 'done' });
    // The value is everything after the first colon.
    const withColon = await t.call('GET', `/v1/runs?attr=${encodeURIComponent('customer:acme:eu')}`);
    expect(withColon.body.items.map((r: any) => r.id)).toEqual([b.body.id]);
    expect((await t.call('GET', '/v1/runs/count?attr=stage:done')).body).toEqual({ count: 2, capped: false });
    // A bulk action takes the same filter (the console's bulk actions act on what its filters show).
    const bulk = await t.call('POST', '/v1/runs/bulk', {
      action: 'cancel',
      filter: { attr: 'customer:42' },
      dry_run: true,
    });
    expect(bulk.status).toBe(200);
    expect(bulk.body.matched).toBe(1);
  });

  it('refuses attributes and filters it cannot read, saying what it takes', async () => {
    const nested = await t.call('POST', '/v1/runs', {
      definition: 'tagged-api',
      attributes: { customer: { id: 1 } },
    });
    expect(nested.status).toBe(400);
    const badName = await t.call('POST', '/v1/runs', {
      definition: 'tagged-api',
      attributes: { 'no spaces': 1 },
    });
    expect(badName.status).toBe(400);
    expect(badName.body.error.message).toContain('attribute name');
    const badFilter = await t.call('GET', '/v1/runs?attr=customer');
    expect(badFilter.status).toBe(400);
    expect(badFilter.body.error.message).toContain('attr');
  });
});
