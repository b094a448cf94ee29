import { TEST_ADMIN_KEY } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

const FLOW = `
name: archived
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

describe('retention over HTTP', () => {
  it('sets, shows and clears policies, and refuses a period it cannot read', async () => {
    const set = await t.call('PUT', '/v1/retention', { keep: '30d' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      namespace: 'default',
      definition: null,
      keep_ms: 30 * 86_400_000,
      archive: false,
    });
    await t.call('PUT', '/v1/retention', { keep: '1d', definition: 'archived', archive: true });
    const shown = await t.call('GET', '/v1/retention');
    expect(shown.body.items.map((p: any) => [p.definition, p.archive])).toEqual([
      [null, false],
      ['archived', true],
    ]);
    const bad = await t.call('PUT', '/v1/retention', { keep: 'forever' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('30s');
    expect((await t.call('DELETE', '/v1/retention')).body).toEqual({ deleted: true });
    expect((await t.call('DELETE', '/v1/retention')).body).toEqual({ deleted: false });
  });

  it('purges by hand (a dry run first), and answers an archived run from its archive', async () => {
    const run = await t.call('POST', '/v1/runs', { definition: 'archived', input: { n: 3 } });
    await until(async () => (await t.call('GET', `/v1/runs/${run.body.id}`)).body.status === 'completed');
    const before = new Date(Date.now() + 3_600_000).toISOString();

    const dry = await t.call('POST', '/v1/runs/purge', { before, definition: 'archived', dry_run: true });
    // Its values are small: no blob of it waits for the blob deleter.
    expect(dry.body).toEqual({
      dry_run: true,
      matched: 1,
      purged: 0,
      capped: false,
      blobs_waiting: 0,
      blobs_failing: 0,
    });
    expect((await t.call('GET', `/v1/runs/${run.body.id}`)).body.archived).toBeUndefined();

    const real = await t.call('POST', '/v1/runs/purge', { before, definition: 'archived' });
    expect(real.body).toMatchObject({ dry_run: false, purged: 1 });
    expect((await t.call('GET', `/v1/runs?run_id=${run.body.id}`)).body.items).toEqual([]);

    const shown = await t.call('GET', `/v1/runs/${run.body.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({
      id: run.body.id,
      status: 'completed',
      archived: true,
      input: { n: 3 },
      output: { shape: { seen: 3 } },
    });
    expect(shown.body.history.length).toBeGreaterThan(0);
    // Another namespace does not see it.
    const elsewhere = await t.call('GET', `/v1/runs/${run.body.id}`, undefined, {
      'x-weft-namespace': 'other',
    });
    expect(elsewhere.status).toBe(404);

    const metrics = await fetch(`${t.url}/metrics`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` },
    });
    const text = await metrics.text();
    expect(text).toMatch(/^weft_runs_purged_total 1$/m);
    expect(text).toMatch(/^weft_runs_archived_total 1$/m);
    expect(text).toMatch(/^weft_blobs_deleted_total 0$/m);
    expect(text).toMatch(/^weft_blobs_awaiting_deletion 0$/m);
  });

  it('refuses a purge without a time it can read', async () => {
    const res = await t.call('POST', '/v1/runs/purge', { before: 'last week' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('before');
  });
});
