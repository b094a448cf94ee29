import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { TEST_AUTH_HEADERS } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// Every error answer is JSON {error: {code, message}}, refusals made before any route included; and a
// server process with the guard on survives an error nothing handled, logging and counting it.

let t: TestServer;
beforeAll(async () => {
  // A 1 MiB payload limit: the body limit is then the 8 MiB floor.
  t = await startTestServer({ maxPayloadBytes: 1024 * 1024 }, { console: null });
});
afterAll(async () => {
  await t?.close();
});

async function raw(path: string, init: RequestInit = {}) {
  const res = await fetch(`${t.url}${path}`, {
    ...init,
    headers: { ...TEST_AUTH_HEADERS, ...(init.headers as Record<string, string>) },
  });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type'), body: JSON.parse(text) };
}

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ error: { code, message: expect.any(String) } });
  expect(res.body.error.message.length).toBeGreaterThan(20);
}

/** Sends raw bytes on a socket and returns the whole answer. */
function rawHttp(text: string): Promise<string> {
  const { hostname, port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(text));
    let got = '';
    socket.on('data', (d) => {
      got += d.toString();
    });
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
  });
}

describe('error answers', () => {
  it('404 for an unknown route', async () => {
    expectError(await raw('/v1/nothing-here'), 404, 'not_found');
    expectError(await raw('/v1/runs', { method: 'DELETE' }), 404, 'not_found');
  });

  it('413 for a body over the limit', async () => {
    const res = await raw('/v1/runs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ definition: 'x', input: 'y'.repeat(9 * 1024 * 1024) }),
    });
    expectError(res, 413, 'body_too_large');
  });

  it('414 for a URL too long, however long', async () => {
    expectError(await raw(`/v1/runs?definition=${'d'.repeat(10_000)}`), 414, 'url_too_long');
    expectError(await raw(`/v1/runs/${'x'.repeat(1000)}`), 414, 'url_too_long');
    expectError(await raw(`/v1/runs?definition=${'d'.repeat(40_000)}`), 414, 'url_too_long');
  });

  it('431 for headers too large, 400 for what is not HTTP, 400 for a path that does not decode', async () => {
    const big = await rawHttp(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20_000)}\r\n\r\n`);
    expect(big).toMatch(/^HTTP\/1.1 431 /);
    expect(JSON.parse(big.slice(big.indexOf('\r\n\r\n') + 4)).error.code).toBe('headers_too_large');
    const junk = await rawHttp('NOT HTTP AT ALL\r\n\r\n');
    expect(junk).toMatch(/^HTTP\/1.1 400 /);
    expect(JSON.parse(junk.slice(junk.indexOf('\r\n\r\n') + 4)).error.code).toBe('bad_http');
    expectError(await raw('/v1/runs/%E0%A4%A'), 400, 'bad_url');
  });
});

describe('a server process with the guard on', () => {
  it('logs and counts an unhandled rejection and an uncaught exception, and keeps serving', async () => {
    const script = fileURLToPath(new URL('./fixtures/guarded-server.mjs', import.meta.url));
    const child = spawn(process.execPath, [script], {
      env: { ...process.env, WEFT_TEST_DATABASE_URL: t.db.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, err).toBe(0);
    expect(JSON.parse(err.trim().split('\n').pop()!)).toEqual({ counted: '2', health: 200 });
    expect(out).toContain('planted rejection');
    expect(out).toContain('planted exception');
    expect(out).toContain('unhandled promise rejection');
  });
});
