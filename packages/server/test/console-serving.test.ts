import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_AUTH_HEADERS } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// A console build of our own: the test checks how the server serves one, not what Vite made.
const dir = mkdtempSync(join(tmpdir(), 'weft-console-'));
mkdirSync(join(dir, 'assets'));
writeFileSync(join(dir, 'index.html'), '<!doctype html><title>console</title><div id="root"></div>');
writeFileSync(join(dir, 'assets', 'main-abc123.js'), 'console.log("weft")');

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({}, { console: dir });
});
afterAll(async () => {
  await t?.close();
});

// Without a key: the console's files need none; its API calls carry the key the console asks for.
const page = (
  path: string,
  accept = 'text/html,application/xhtml+xml',
  headers: Record<string, string> = {},
) => fetch(`${t.url}${path}`, { headers: { accept, ...headers } });

describe('the web console on the API port', () => {
  it('serves index.html at / and for the console own paths, never cached', async () => {
    for (const path of [
      '/',
      '/runs',
      '/runs/0190a1b2-0000-7000-8000-000000000000',
      '/definitions/orders?version=2',
    ]) {
      const res = await page(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(await res.text()).toContain('<div id="root">');
    }
  });

  it('serves hashed assets with a long cache', async () => {
    const res = await page('/assets/main-abc123.js', '*/*');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect(await res.text()).toBe('console.log("weft")');
  });

  it('keeps the API first: API routes answer JSON, and unknown API paths a JSON 404 even for a browser', async () => {
    expect((await page('/v1/runs')).status).toBe(401);
    const runs = await page('/v1/runs', 'text/html', TEST_AUTH_HEADERS);
    expect(runs.status).toBe(200);
    expect((await runs.json()) as any).toMatchObject({ items: [] });
    for (const path of ['/v1/nope', '/v1/runs/x/y/z', '/assets/missing.js']) {
      const res = await page(path);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as any).error.code).toBe('not_found');
    }
    const health = await page('/healthz');
    expect((await health.json()) as any).toEqual({ ok: true });
  });

  it('answers a JSON 404 to a client that does not ask for HTML, and to other methods', async () => {
    const res = await page('/runs', 'application/json');
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.code).toBe('not_found');
    const post = await fetch(`${t.url}/runs`, { method: 'POST', headers: { accept: 'text/html' } });
    expect(post.status).toBe(404);
  });
});

describe('a server with no console build', () => {
  it('answers / with a JSON 404 that says how to build the console', async () => {
    const bare = await startTestServer({}, { console: null });
    try {
      const res = await fetch(`${bare.url}/`, { headers: { accept: 'text/html' } });
      expect(res.status).toBe(404);
      expect(((await res.json()) as any).error.message).toContain('npm run build');
    } finally {
      await bare.close();
    }
  });
});
