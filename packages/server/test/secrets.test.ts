import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SecretBox, SecretService } from '@weft/engine';
import { PgSecretStore } from '@weft/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// Secrets are set through the API, sealed at rest, named in an `http` node as `secrets.NAME`, and resolved
// only at the moment of the call: the receiver gets the value; the database, the run and its history never
// hold it.

const KEY = randomBytes(32).toString('base64');
const TOKEN = `tok-${randomBytes(12).toString('hex')}`;
let t: TestServer;
let echo: Server;
let echoBase: string;
const seen: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  t = await startTestServer({}, { secretsKey: KEY, outboundAllow: '127.0.0.1' });
  echo = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ url: req.url!, headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json', 'x-echo': String(req.headers.authorization) });
      res.end(JSON.stringify({ url: req.url, authorization: req.headers.authorization, body }));
    });
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  echoBase = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await t?.close();
  await new Promise((r) => echo?.close(r));
});

async function runToEnd(definition: string, input: Record<string, unknown> = {}) {
  const started = await t.call('POST', '/v1/runs', { definition, input });
  expect(started.status).toBe(201);
  for (let i = 0; i < 200; i++) {
    const r = await t.call('GET', `/v1/runs/${started.body.id}`);
    if (r.body.status !== 'running') return r.body;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error('the run did not finish within 10 s');
}

/** Every row of every table of the weft schema, as text. */
async function databaseText(): Promise<string> {
  const tables = await t.db.sql<{ name: string }[]>`
    SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'weft'`;
  const parts: string[] = [];
  for (const { name } of tables) {
    const rows = await t.db.sql.unsafe(`SELECT t::text AS row FROM weft."${name}" t`);
    parts.push(...rows.map((r) => String(r.row)));
  }
  return parts.join('\n');
}

describe('secrets', () => {
  it('are set and listed by name only', async () => {
    expect((await t.call('PUT', '/v1/secrets/API_TOKEN', { value: TOKEN })).status).toBe(200);
    const list = await t.call('GET', '/v1/secrets');
    expect(list.body.items.map((s: { name: string }) => s.name)).toEqual(['API_TOKEN']);
    expect(JSON.stringify(list.body)).not.toContain(TOKEN);
    const bad = await t.call('PUT', '/v1/secrets/no-dashes', { value: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('bad_secret_name');
  });

  it('reach the receiver of an http node and nowhere else', async () => {
    await t.call(
      'POST',
      '/v1/definitions',
      `name: with-secret
nodes:
  - id: call
    kind: http
    method: POST
    url: "'${echoBase}/hook?key=' & secrets.API_TOKEN"
    headers: { authorization: "'Bearer ' & secrets.API_TOKEN" }
    body: { token: "secrets.API_TOKEN" }
`,
    );
    const run = await runToEnd('with-secret');
    expect(run.status).toBe('completed');
    const got = seen.at(-1)!;
    expect(got.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(got.url).toBe(`/hook?key=${TOKEN}`);
    expect(JSON.parse(got.body)).toEqual({ token: TOKEN });
    // The receiver echoed the token back; the output shows it redacted.
    expect(run.output.call.body.authorization).toBe('Bearer [redacted]');
    expect(run.output.call.headers['x-echo']).toBe('Bearer [redacted]');
    const history = await t.call('GET', `/v1/runs/${run.id}/history`);
    expect(history.status).toBe(200);
    expect(JSON.stringify(history.body)).not.toContain(TOKEN);
    expect(JSON.stringify(run)).not.toContain(TOKEN);
  });

  it("fill a status callback's URL at delivery", async () => {
    await t.call(
      'POST',
      '/v1/definitions',
      `name: called-back\non_status: { url: "${echoBase}/callback?token={{secrets.API_TOKEN}}" }\nnodes:\n  - { id: w, kind: wait, duration: 0s }\n`,
    );
    const run = await runToEnd('called-back');
    expect(run.status).toBe('completed');
    for (let i = 0; i < 200 && !seen.some((s) => s.url.startsWith('/callback')); i++)
      await new Promise((res) => setTimeout(res, 50));
    expect(seen.find((s) => s.url.startsWith('/callback'))?.url).toBe(`/callback?token=${TOKEN}`);
  });

  it('leave no plaintext in any table of the database', async () => {
    const text = await databaseText();
    expect(text).toContain('{{secrets.API_TOKEN}}');
    expect(text).toContain('API_TOKEN');
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(Buffer.from(TOKEN).toString('hex'));
  });

  it("are never filled from a placeholder that arrives in a run's input", async () => {
    await t.call(
      'POST',
      '/v1/definitions',
      `name: forwards-input\nnodes:\n  - { id: call, kind: http, method: POST, url: "'${echoBase}/fwd'", body: { note: "input.note" } }\n`,
    );
    const before = seen.length;
    const run = await runToEnd('forwards-input', { note: '{{secrets.API_TOKEN}}' });
    expect(run.status).toBe('failed');
    expect(run.error.message).toContain('does not name secrets.API_TOKEN');
    expect(seen.slice(before).map((s) => s.url)).toEqual([]);
  });

  it('fail an http node for good when one is not set, naming how to set it', async () => {
    await t.call(
      'POST',
      '/v1/definitions',
      `name: unset\nnodes:\n  - { id: call, kind: http, url: "'${echoBase}/x?k=' & secrets.NOPE", retry: { max_attempts: 3, delay: 0s } }\n`,
    );
    const run = await runToEnd('unset');
    expect(run.status).toBe('failed');
    expect(run.error.message).toContain('secret "NOPE" is not set in namespace "default"');
    expect(run.error.message).toContain('weft secrets set NOPE');
  });

  it('are deleted by name', async () => {
    await t.call('PUT', '/v1/secrets/GONE', { value: 'soon gone' });
    expect((await t.call('DELETE', '/v1/secrets/GONE')).body).toEqual({ deleted: true });
    const again = await t.call('DELETE', '/v1/secrets/GONE');
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('secret_not_found');
  });
});

describe('secret keys', () => {
  it('rotate: values sealed with an old key are sealed again with the new one', async () => {
    const store = new PgSecretStore(t.db.sql);
    const oldKey = randomBytes(32).toString('base64');
    const newKey = randomBytes(32).toString('base64');
    await new SecretService(store, new SecretBox({ current: oldKey })).set('rotation', 'DB', 'hunter22');
    const onlyNew = new SecretService(store, new SecretBox({ current: newKey }));
    await expect(onlyNew.resolve('rotation', ['DB'])).rejects.toThrow(/WEFT_SECRETS_OLD_KEYS/);
    const both = new SecretService(store, new SecretBox({ current: newKey, old: [oldKey] }));
    // The server's own secret (sealed with its key, which `both` lacks) is left as it is, and named.
    expect(await both.rotate()).toEqual({ resealed: 1, unopened: ['default/API_TOKEN'] });
    expect((await onlyNew.resolve('rotation', ['DB'])).get('DB')).toBe('hunter22');
    expect((await both.rotate()).resealed).toBe(0);
  });

  it('a re-seal loses to a set made meanwhile', async () => {
    const store = new PgSecretStore(t.db.sql);
    const oldKey = randomBytes(32).toString('base64');
    const newKey = randomBytes(32).toString('base64');
    const before = new SecretBox({ current: oldKey });
    await new SecretService(store, before).set('race', 'K', 'first');
    const [stale] = (await store.sealedWithOtherKeys('none', { namespace: 'race', name: '' }, 10)).filter(
      (s) => s.namespace === 'race',
    );
    const after = new SecretService(store, new SecretBox({ current: newKey, old: [oldKey] }));
    await after.set('race', 'K', 'second');
    // The rotation read the row before the set and writes after it: its write must not land.
    await store.reseal({ ...stale!, ...before.seal('race', 'K', 'first') }, stale!.keyId);
    expect((await after.resolve('race', ['K'])).get('K')).toBe('second');
  });

  it('without a key, secrets cannot be set, and the answer says which setting to set', async () => {
    const none = new SecretService(new PgSecretStore(t.db.sql), undefined);
    await expect(none.set('default', 'X', 'y')).rejects.toMatchObject({
      code: 'secrets_not_configured',
      message: expect.stringContaining('WEFT_SECRETS_KEY'),
    });
  });

  it('refuse a key that is not 32 bytes, naming the setting', () => {
    expect(() => new SecretBox({ current: 'c2hvcnQ=' })).toThrow(/WEFT_SECRETS_KEY must be 32 bytes/);
  });
});
