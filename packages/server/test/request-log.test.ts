import { randomUUID } from 'node:crypto';
import { Engine } from '@weft/engine';
import { PgApiKeys, PgStore } from '@weft/postgres';
import { buildApp, ensureBootstrapKey, requestIdMixin } from '@weft/server';
import {
  createTestDatabase,
  TEST_ADMIN_KEY,
  TEST_ADMIN_NAME,
  TEST_AUTH_HEADERS,
  type TestDatabase,
} from '@weft/testing';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Request logs: the caller's x-request-id is kept (or one made), returned on every answer and carried by every
// line logged for the request; one access line per request with method, route, status, duration and caller;
// no body, query string or path value in any line.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let db: TestDatabase;
let engine: Engine;
let app: FastifyInstance;
let url: string;
const lines: Record<string, unknown>[] = [];
const raw: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await ensureBootstrapKey(new PgApiKeys(db.sql), TEST_ADMIN_KEY);
  const logger = pino(
    { level: 'info', mixin: requestIdMixin },
    {
      write(chunk: string) {
        raw.push(chunk);
        lines.push(JSON.parse(chunk) as Record<string, unknown>);
      },
    },
  );
  engine = new Engine({ store: new PgStore(db.sql), logger });
  await engine.start();
  app = buildApp({ engine, console: null, auth: { mode: 'keys', keys: new PgApiKeys(db.sql) }, logger });
  // A route of the test's own that logs, while it runs, through its request's logger and (after awaiting a
  // query) through the engine's, as Weft's own code does.
  app.get('/test/logs-a-line', { config: { auth: 'public' } }, async (request) => {
    request.log.warn({ step: 'inside' }, 'a line from inside the request');
    await db.sql`SELECT 1`;
    logger.warn('a line through the shared logger');
    return { ok: true };
  });
  // Lines logged outside any request carry no id.
  logger.info('outside any request');
  url = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await app?.close();
  await engine?.stop();
  await db?.drop();
});

/** The lines logged for one request id. */
function linesOf(id: string): Record<string, unknown>[] {
  return lines.filter((l) => l.request_id === id);
}

/** Waits for the access line of a request (it is written once the answer has gone). */
async function accessLine(id: string): Promise<Record<string, unknown>> {
  const end = Date.now() + 30_000;
  for (;;) {
    const found = linesOf(id).find((l) => l.msg === 'request');
    if (found) return found;
    if (Date.now() > end) throw new Error(`no access line for ${id}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('request logs', () => {
  it("keeps the caller's x-request-id, returns it, and writes one access line with method, route, status, duration and caller", async () => {
    const id = `lb-${randomUUID()}`;
    const r = await fetch(`${url}/v1/runs/${randomUUID()}`, {
      headers: { ...TEST_AUTH_HEADERS, 'x-request-id': id },
    });
    expect(r.status).toBe(404);
    expect(r.headers.get('x-request-id')).toBe(id);
    const line = await accessLine(id);
    expect(line).toMatchObject({
      method: 'GET',
      route: '/v1/runs/:id',
      status: 404,
      caller: TEST_ADMIN_NAME,
      level: 30,
    });
    expect(line.duration_ms).toEqual(expect.any(Number));
    expect(linesOf(id).filter((l) => l.msg === 'request')).toHaveLength(1);
  });

  it('makes a new id when the caller sends none or one that is not plain', async () => {
    for (const sent of [undefined, 'has spaces in it', 'x'.repeat(129), 'line\u00e9break']) {
      const headers: Record<string, string> = { ...TEST_AUTH_HEADERS };
      if (sent !== undefined) headers['x-request-id'] = sent;
      const r = await fetch(`${url}/livez`, { headers });
      const id = r.headers.get('x-request-id');
      expect(id, String(sent)).toMatch(UUID);
      expect((await accessLine(id!)).route).toBe('/livez');
    }
  });

  it('carries the request id on every line logged while the request runs', async () => {
    const id = randomUUID();
    await fetch(`${url}/test/logs-a-line`, { headers: { 'x-request-id': id } });
    await accessLine(id);
    expect(linesOf(id).map((l) => l.msg)).toEqual([
      'a line from inside the request',
      'a line through the shared logger',
      'request',
    ]);
    // Once, not twice, on the request logger's own lines.
    for (const line of raw.filter((l) => l.includes(id))) expect(line.split('request_id').length).toBe(2);
    expect(lines.find((l) => l.msg === 'outside any request')).not.toHaveProperty('request_id');
    // An unauthenticated request: logged with no caller.
    const anonymous = await fetch(`${url}/v1/runs`);
    expect(anonymous.status).toBe(401);
    const line = await accessLine(anonymous.headers.get('x-request-id')!);
    expect(line).toMatchObject({ route: '/v1/runs', status: 401, caller: null });
  });

  it('returns the id on a history stream too', async () => {
    const deployed = await fetch(`${url}/v1/definitions`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml', ...TEST_AUTH_HEADERS },
      body: 'name: logged\nnodes:\n  - { id: a, task_type: logged.a }\n',
    });
    expect(deployed.status).toBe(201);
    const started = await fetch(`${url}/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...TEST_AUTH_HEADERS },
      body: JSON.stringify({ definition: 'logged', input: {} }),
    });
    const run = (await started.json()) as { id: string };
    const abort = new AbortController();
    const stream = await fetch(`${url}/v1/runs/${run.id}/events`, {
      headers: { ...TEST_AUTH_HEADERS, 'x-request-id': 'stream-1' },
      signal: abort.signal,
    });
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    expect(stream.headers.get('x-request-id')).toBe('stream-1');
    abort.abort();
  });

  it('never logs a body, a query string or a value from the path', async () => {
    const marker = `marker${randomUUID().replaceAll('-', '')}`;
    const json = { 'content-type': 'application/json', ...TEST_AUTH_HEADERS };
    const ids: string[] = [];
    const send = async (path: string, init: RequestInit = {}) => {
      const r = await fetch(`${url}${path}`, init);
      ids.push(r.headers.get('x-request-id')!);
      return r.status;
    };
    // A start with the marker in its input (refused: no such definition), one that breaks the schema, a
    // YAML deploy that does not parse, a query string and a path.
    expect(
      await send('/v1/runs', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ definition: 'none', input: { card: marker } }),
      }),
    ).toBe(404);
    expect(
      await send('/v1/runs', { method: 'POST', headers: json, body: JSON.stringify({ [marker]: marker }) }),
    ).toBe(400);
    expect(
      await send('/v1/definitions', {
        method: 'POST',
        headers: { 'content-type': 'application/yaml', ...TEST_AUTH_HEADERS },
        body: `name: [${marker}`,
      }),
    ).toBeGreaterThanOrEqual(400);
    await send(`/v1/runs?definition=${marker}`, { headers: TEST_AUTH_HEADERS });
    await send(`/v1/definitions/${marker}`, { headers: TEST_AUTH_HEADERS });
    for (const id of ids) await accessLine(id);
    expect(raw.filter((l) => l.includes(marker))).toEqual([]);
  });
});
