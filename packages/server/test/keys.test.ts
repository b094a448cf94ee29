import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { serve } from '@weft/server';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// API keys over their life (made, used, revoked), the first key of an installation, serving without
// keys, and writes from web pages of other origins.

const run = promisify(execFile);
const CLI = new URL('../../cli/dist/main.js', import.meta.url).pathname;
const DEF = 'name: keyed\nnodes:\n  - { id: a, task_type: keyed.a }\n';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({}, { corsOrigins: ['https://ops.example'] });
});
afterAll(async () => {
  await t?.close();
});

const as = (key: string, headers: Record<string, string> = {}) => ({
  authorization: `Bearer ${key}`,
  ...headers,
});

describe('API keys', () => {
  it('shows a key once, keeps only its hash, notes its use at most once a minute, and refuses it revoked', async () => {
    const made = await t.call('POST', '/v1/keys', { name: 'ci', role: 'operator', namespaces: ['shop'] });
    expect(made.status).toBe(201);
    expect(made.body.key).toMatch(/^weft_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(made.body).toMatchObject({
      name: 'ci',
      role: 'operator',
      namespaces: ['shop'],
      last_used_at: null,
    });
    const [row] = await t.server.store.sql<
      { hash: Buffer }[]
    >`SELECT hash FROM weft.api_keys WHERE name = 'ci'`;
    expect(row!.hash.toString('hex')).not.toContain(made.body.key);
    expect(JSON.stringify((await t.call('GET', '/v1/keys')).body)).not.toContain(made.body.key.slice(18));
    expect((await t.call('POST', '/v1/keys', { name: 'ci', role: 'viewer' })).body.error.code).toBe(
      'key_exists',
    );

    // Acts in its namespace (the header can be left out), with its name in history.
    expect((await t.call('POST', '/v1/definitions', DEF, as(made.body.key))).status).toBe(201);
    const started = await t.call('POST', '/v1/runs', { definition: 'keyed' }, as(made.body.key));
    expect(started.status).toBe(201);
    const firstUse = async () =>
      (
        await t.server.store.sql<
          { lastUsedAt: Date | null }[]
        >`SELECT last_used_at FROM weft.api_keys WHERE name = 'ci'`
      )[0]!.lastUsedAt;
    let used: Date | null = null;
    for (let i = 0; i < 200 && used === null; i++) {
      used = await firstUse();
      if (used === null) await new Promise((r) => setTimeout(r, 25));
    }
    expect(used).not.toBeNull();
    for (let i = 0; i < 5; i++)
      expect((await t.call('GET', '/v1/runs', undefined, as(made.body.key))).status).toBe(200);
    expect((await firstUse())?.getTime()).toBe(used!.getTime());

    expect((await t.call('POST', '/v1/keys/ci/revoke')).body.revoked_at).not.toBeNull();
    const refused = await t.call('GET', '/v1/runs', undefined, as(made.body.key));
    expect(refused).toMatchObject({ status: 401, body: { error: { code: 'key_revoked' } } });
    expect(refused.body.error.message).toContain('"ci" was revoked');
    const audit = (await t.call('GET', '/v1/audit')).body.items.map(
      (e: { action: string; target: string }) => [e.action, e.target],
    );
    expect(audit).toEqual(
      expect.arrayContaining([
        ['key.create', 'ci'],
        ['key.revoke', 'ci'],
      ]),
    );
  });

  it('makes the first admin key straight on the database, and the CLI uses it', async () => {
    const env = { ...process.env, NO_COLOR: '1', DATABASE_URL: t.db.url, WEFT_URL: t.url };
    const made = await run(
      process.execPath,
      [CLI, 'keys', 'create', 'first-admin', '--role', 'admin', '--bootstrap'],
      {
        env,
      },
    );
    const key = made.stdout.trim();
    expect(key).toMatch(/^weft_/);
    expect(made.stderr).toContain('shown once');
    const listed = await run(process.execPath, [CLI, 'keys', 'list'], { env: { ...env, WEFT_API_KEY: key } });
    expect(listed.stdout).toMatch(/first-admin\s+admin\s+all/);
    const refused = await run(process.execPath, [CLI, 'keys', 'list'], { env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(refused).toMatchObject({ code: 1 });
    expect((refused as { stderr: string }).stderr).toContain('needs an API key');
  });
});

describe('serving without keys', () => {
  it('is refused on an address other machines can reach', async () => {
    await expect(
      serve({ databaseUrl: t.db.url, host: '0.0.0.0', port: 0, auth: { mode: 'off' }, logLevel: 'silent' }),
    ).rejects.toThrow(/loopback/);
    const cli = await run(process.execPath, [CLI, 'server', '--insecure-no-auth', '--host', '0.0.0.0'], {
      env: { ...process.env, DATABASE_URL: t.db.url, NO_COLOR: '1' },
    }).catch((e: { code: number; stderr: string }) => e);
    expect(cli).toMatchObject({ code: 1 });
    expect((cli as { stderr: string }).stderr).toContain('only on loopback');
  });
});

describe('web pages of other origins', () => {
  it('cannot write with a type that needs no preflight, and get CORS only when their origin is listed', async () => {
    const foreign = { origin: 'https://elsewhere.example', 'content-type': 'text/plain' };
    const plain = await t.call('POST', '/v1/definitions', DEF, foreign);
    expect(plain).toMatchObject({ status: 415, body: { error: { code: 'unsupported_media_type' } } });
    const form = await t.call('POST', '/v1/runs', 'definition=keyed', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(415);
    const preflight = (origin: string) =>
      fetch(`${t.url}/v1/runs`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
    expect(
      (await preflight('https://elsewhere.example')).headers.get('access-control-allow-origin'),
    ).toBeNull();
    const listed = await preflight('https://ops.example');
    expect(listed.status).toBe(204);
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://ops.example');
    expect(listed.headers.get('access-control-allow-headers')).toContain('authorization');
  });
});

describe('who did it', () => {
  it('is the key: history names it (a caller note beside it), and the audit list keeps administrative changes', async () => {
    const key = (
      await t.call('POST', '/v1/keys', { name: 'ops-alice', role: 'operator', namespaces: ['acts'] })
    ).body.key;
    const headers = { authorization: `Bearer ${key}` };
    const def =
      'name: acted\nnodes:\n  - { id: hold, kind: wait_for_event, event: go }\n  - { id: a, task_type: acted.a }\nedges:\n  - { from: hold, to: a }\n';
    expect((await t.call('POST', '/v1/definitions', def, headers)).status).toBe(201);
    const runId = (await t.call('POST', '/v1/runs', { definition: 'acted' }, headers)).body.id;
    expect(
      (await t.call('POST', `/v1/runs/${runId}/signals`, { name: 'go', by: 'forged-name' }, headers)).status,
    ).toBe(200);
    expect((await t.call('POST', `/v1/runs/${runId}/cancel`, { reason: 'done' }, headers)).status).toBe(200);
    const events = (await t.call('GET', `/v1/runs/${runId}/history`, undefined, headers)).body.events;
    const by = events
      .filter((e: { data: { by?: string } }) => e.data?.by)
      .map((e: { type: string; data: { by: string } }) => [e.type, e.data.by]);
    expect(by).toEqual(
      expect.arrayContaining([
        ['run.started', 'ops-alice'],
        ['signal.received', 'ops-alice (for forged-name)'],
        [expect.stringMatching(/cancel/), 'ops-alice'],
      ]),
    );
    const admin = (
      await t.call('POST', '/v1/keys', { name: 'acts-admin', role: 'admin', namespaces: ['acts'] })
    ).body.key;
    const asAdmin = { authorization: `Bearer ${admin}` };
    expect((await t.call('PUT', '/v1/limits/quota', { max: 5 }, asAdmin)).status).toBe(200);
    expect(
      (await t.call('PUT', '/v1/schedules/nightly', { definition: 'acted', cron: '0 2 * * *' }, headers))
        .status,
    ).toBe(200);
    const audit = (await t.call('GET', '/v1/audit')).body.items;
    expect(audit).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          actor: 'acts-admin',
          action: 'limit.set',
          namespace: 'acts',
          target: 'quota',
        }),
        expect.objectContaining({
          actor: 'ops-alice',
          action: 'definition.deploy',
          namespace: 'acts',
          target: 'acted@1',
        }),
        expect.objectContaining({
          actor: 'ops-alice',
          action: 'schedule.put',
          namespace: 'acts',
          target: 'nightly',
        }),
      ]),
    );
    expect((await t.call('GET', '/v1/audit', undefined, headers)).status).toBe(403);
  });
});

describe('a rate limit per key', () => {
  it('answers 429 with Retry-After and when to retry, and counts each key apart', async () => {
    const limited = await startTestServer({}, { rateLimit: { max: 3, windowMs: 3_600_000 } });
    try {
      const other = (await limited.call('POST', '/v1/keys', { name: 'other', role: 'viewer' })).body.key;
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await limited.call('GET', '/v1/runs')).status);
      // The admin made a key and listed runs three times: its fourth and fifth request are over the limit.
      expect(statuses).toEqual([200, 200, 429]);
      const res = await fetch(`${limited.url}/v1/runs`, {
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` },
      });
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('rate_limited');
      expect(body.error.message).toMatch(/retry in \d+ s/);
      expect(
        (await limited.call('GET', '/v1/runs', undefined, { authorization: `Bearer ${other}` })).status,
      ).toBe(200);
      expect((await fetch(`${limited.url}/healthz`)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
