import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { outboundPolicy } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Harness, harness } from './helpers.js';

// Outbound calls (`http` nodes, status callbacks) refuse loopback, private, link-local and metadata
// addresses unless allow-listed, checked after DNS and on every redirect. Two local servers: the "inside"
// one on 127.0.0.1 (refused) and an allow-listed one on 127.0.0.2 (another loopback address on Linux).

let h: Harness;
const inside = { calls: 0, server: undefined as Server | undefined, port: 0 };
let opened: Server;
let openedBase: string;

function listen(server: Server, host: string): Promise<number> {
  return new Promise((r) => server.listen(0, host, () => r((server.address() as AddressInfo).port)));
}

beforeAll(async () => {
  h = await harness({ relayPollMs: 50, relayBackoffMs: 50 }, { outboundAllow: '127.0.0.2' });
  inside.server = createServer((_req, res) => {
    inside.calls++;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('weft_internal_metric 1');
  });
  inside.port = await listen(inside.server, '127.0.0.1');
  opened = createServer((req, res) => {
    if (req.url === '/to-inside') {
      res.writeHead(302, { location: `http://127.0.0.1:${inside.port}/metrics` });
      return res.end();
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ path: req.url }));
  });
  openedBase = `http://127.0.0.2:${await listen(opened, '127.0.0.2')}`;
});
afterAll(async () => {
  await h?.close();
  await new Promise((r) => inside.server?.close(r));
  await new Promise((r) => opened?.close(r));
});

async function runHttp(name: string, url: string) {
  await h.engine.definitions.deploy(
    'default',
    `name: ${name}\nnodes:\n  - { id: call, kind: http, url: "'${url}'", retry: { max_attempts: 3, delay: 0s } }\n`,
  );
  const run = await h.engine.runs.start({ namespace: 'default', definition: name, input: {} });
  return eventually(async () => {
    const r = await h.engine.runs.get(run.id);
    return r.status === 'running' ? undefined : r;
  });
}

describe('http nodes refuse internal addresses', () => {
  it('refuses a loopback address, for good, naming the setting, without calling it', async () => {
    const before = inside.calls;
    const run = await runHttp('to-loopback', `http://127.0.0.1:${inside.port}/metrics`);
    expect(run.status).toBe('failed');
    expect(run.error?.message).toMatch(/refused to call 127\.0\.0\.1 \(loopback\).*WEFT_OUTBOUND_ALLOW/);
    expect(run.error?.message).not.toMatch(/after \d attempts/);
    expect((await h.store.listTasks(run.id)).map((t) => t.attempt)).toEqual([1]);
    expect(inside.calls).toBe(before);
  });

  it('refuses a host name that resolves to loopback (checked after DNS)', async () => {
    const before = inside.calls;
    const run = await runHttp('to-localhost', `http://localhost:${inside.port}/metrics`);
    expect(run.status).toBe('failed');
    expect(run.error?.message).toMatch(/refused to call localhost at (127\.0\.0\.1|::1) \(loopback\)/);
    expect(inside.calls).toBe(before);
  });

  it('refuses a redirect from an allowed host to loopback', async () => {
    const before = inside.calls;
    const run = await runHttp('redirected', `${openedBase}/to-inside`);
    expect(run.status).toBe('failed');
    expect(run.error?.message).toMatch(/refused to call 127\.0\.0\.1 \(loopback\).*WEFT_OUTBOUND_ALLOW/);
    expect(inside.calls).toBe(before);
  });

  it('calls an allow-listed address', async () => {
    const run = await runHttp('allowed', `${openedBase}/fine`);
    expect(run.status).toBe('completed');
    expect(run.output).toMatchObject({ call: { status: 200, body: { path: '/fine' } } });
  });
});

describe('status callbacks refuse internal addresses', () => {
  it('dead-letters a callback to loopback at once, naming the setting, without calling it', async () => {
    const before = inside.calls;
    await h.engine.definitions.deploy(
      'default',
      `name: tattle\non_status: { url: "http://127.0.0.1:${inside.port}/hook" }\nnodes:\n  - { id: w, kind: wait, duration: 0s }\n`,
    );
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'tattle', input: {} });
    const dead = await eventually(async () => {
      const page = await h.store.listDeadLetters({ namespace: 'default', limit: 10 });
      return page.items.find((r) => r.runId === run.id);
    });
    expect(dead.attempts).toBeLessThanOrEqual(1);
    expect(dead.lastError).toMatch(/refused to call 127\.0\.0\.1 \(loopback\).*WEFT_OUTBOUND_ALLOW/);
    expect(inside.calls).toBe(before);
  });
});

describe('the outbound policy', () => {
  const refused = (allow: string, host: string, address = host) => {
    try {
      const p = outboundPolicy(allow);
      p.checkHost(host);
      p.checkAddress(host, address);
      return false;
    } catch {
      return true;
    }
  };

  it('refuses internal and metadata addresses by default, in every spelling', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '0.0.0.0'])
      expect(refused('', a), a).toBe(true);
    for (const a of ['[::1]', '::', 'fd00:ec2::254', 'fe80::1', '::ffff:127.0.0.1', '::ffff:169.254.169.254'])
      expect(refused('', a), a).toBe(true);
    expect(refused('', 'metadata.google.internal', '203.0.113.9')).toBe(true);
    expect(refused('', 'example.com', '10.0.0.5')).toBe(true);
  });

  it('lets public addresses through, and what the allow-list opens', () => {
    expect(refused('', '93.184.215.14')).toBe(false);
    expect(refused('', 'example.com', '2606:2800:21f:cb07:6820:80da:af6b:8b2c')).toBe(false);
    expect(refused('10.0.0.0/8', '10.9.8.7')).toBe(false);
    expect(refused('10.0.0.0/8', '11.0.0.1', '192.168.0.1')).toBe(true);
    expect(refused('hooks.internal, ::1', 'hooks.internal', '10.0.0.5')).toBe(false);
    expect(refused('hooks.internal, ::1', '[::1]')).toBe(false);
  });

  it('refuses an allow-list entry it cannot read, naming it', () => {
    expect(() => outboundPolicy('10.0.0.0/40')).toThrow(/WEFT_OUTBOUND_ALLOW: "10.0.0.0\/40"/);
  });
});
