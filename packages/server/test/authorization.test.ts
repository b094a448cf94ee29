import { Engine } from '@weft/engine';
import { MemoryStore } from '@weft/memory';
import { type AuthRule, buildApp, generateKey, type RouteRule, routeRules } from '@weft/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// Every route of the server's own route table, called with every kind of caller: no key, a malformed,
// unknown, revoked or expired key, a key of another namespace, and a key of each role. A route added
// without a rule fails this test (and the server refuses to start).

const ALPHA = 'alpha';
const DEF = `name: guarded
nodes:
  - { id: a, task_type: guarded.a }
`;

interface Expected {
  readonly status: number;
  readonly code: string;
}
/** What a caller should get from a route of a rule: an error, or `allowed` (anything but 401 and 403). */
type Outcome = Expected | 'allowed';

interface Caller {
  readonly name: string;
  readonly key: string | null;
  readonly expect: (rule: AuthRule, url: string) => Outcome;
}

const forbidden: Outcome = { status: 403, code: 'forbidden' };
const open = (rule: AuthRule) => rule === 'public';
const denied = (code: string) => (rule: AuthRule) => (open(rule) ? 'allowed' : { status: 401, code });
/** A key limited to ALPHA with this role: allowed where the rule lets the role in, 403 elsewhere. */
const role =
  (...rules: AuthRule[]) =>
  (rule: AuthRule): Outcome =>
    open(rule) || rules.includes(rule) ? 'allowed' : forbidden;

let t: TestServer;
let runId: string;
/** A run the table test leaves alone, for the report test. */
let quietRunId: string;
const keys: Record<string, string> = {};

async function makeKey(name: string, body: Record<string, unknown>): Promise<string> {
  const made = await t.call('POST', '/v1/keys', { name, ...body });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return made.body.key;
}

beforeAll(async () => {
  t = await startTestServer({}, { auth: { metricsToken: 'scrape-token' } });
  expect((await t.call('POST', '/v1/definitions', DEF, { 'x-weft-namespace': ALPHA })).status).toBe(201);
  const run = await t.call('POST', '/v1/runs', { definition: 'guarded' }, { 'x-weft-namespace': ALPHA });
  runId = run.body.id;
  quietRunId = (await t.call('POST', '/v1/runs', { definition: 'guarded' }, { 'x-weft-namespace': ALPHA }))
    .body.id;
  keys.admin = await makeKey('admin-all', { role: 'admin' });
  keys.beta = await makeKey('admin-beta', { role: 'admin', namespaces: ['beta'] });
  keys.operator = await makeKey('operator-alpha', { role: 'operator', namespaces: [ALPHA] });
  keys.viewer = await makeKey('viewer-alpha', { role: 'viewer', namespaces: [ALPHA] });
  keys.worker = await makeKey('worker-alpha', { role: 'worker', namespaces: [ALPHA] });
  keys.revoked = await makeKey('revoked', { role: 'admin' });
  expect((await t.call('POST', '/v1/keys/revoked/revoke')).status).toBe(200);
  keys.expired = await makeKey('expired', { role: 'admin', expires_in: '1h' });
  await t.server.store
    .sql`UPDATE weft.api_keys SET expires_at = now() - interval '1 minute' WHERE name = 'expired'`;
});
afterAll(async () => {
  await t?.close();
});

const callers = (): Caller[] => [
  { name: 'no key', key: null, expect: denied('key_missing') },
  { name: 'malformed key', key: 'not-a-weft-key', expect: denied('key_unknown') },
  { name: 'unknown key', key: generateKey().key, expect: denied('key_unknown') },
  { name: 'revoked key', key: keys.revoked!, expect: denied('key_revoked') },
  { name: 'expired key', key: keys.expired!, expect: denied('key_expired') },
  {
    name: "another namespace's admin",
    key: keys.beta!,
    expect: (rule, url) => {
      if (open(rule)) return 'allowed';
      if (rule === 'system' || rule === 'metrics') return forbidden;
      return { status: 404, code: url.startsWith('/v1/runs/:id') ? 'run_not_found' : 'namespace_not_found' };
    },
  },
  { name: 'admin', key: keys.admin!, expect: () => 'allowed' },
  { name: 'operator', key: keys.operator!, expect: role('read', 'operate', 'connect') },
  { name: 'viewer', key: keys.viewer!, expect: role('read', 'connect') },
  { name: 'worker', key: keys.worker!, expect: role('work', 'connect') },
];

/** The route's path with its parameters filled in: the run of ALPHA for run routes. */
function pathOf(url: string): string {
  const id = url.startsWith('/v1/runs/:id')
    ? runId
    : url.startsWith('/v1/dead-letters')
      ? '1'
      : '0190a1b2-0000-7000-8000-000000000000';
  return url
    .replace(':id', id)
    .replace(':node', 'a')
    .replace(':name', 'nothing-here')
    .replace(':kind', 'concurrency')
    .replace(':version', '1');
}

async function call(route: RouteRule, caller: Caller): Promise<{ status: number; code: string | null }> {
  const headers: Record<string, string> = { 'x-weft-namespace': ALPHA };
  if (caller.key !== null) headers.authorization = `Bearer ${caller.key}`;
  const withBody = route.method === 'POST' || route.method === 'PUT';
  if (withBody) headers['content-type'] = 'application/json';
  const res = await fetch(`${t.url}${pathOf(route.url)}`, {
    method: route.method,
    headers,
    signal: AbortSignal.timeout(20_000),
    ...(withBody ? { body: '{}' } : {}),
  });
  // A live stream that was let in never ends: its status is the answer.
  if (!(res.headers.get('content-type') ?? '').includes('application/json')) {
    await res.body?.cancel();
    return { status: res.status, code: null };
  }
  const text = await res.text(); // empty for HEAD
  const body = (text ? JSON.parse(text) : null) as { error?: { code?: string } } | null;
  return { status: res.status, code: body?.error?.code ?? null };
}

describe('authorization of every route', () => {
  // About a thousand requests: a bound for a slow machine, not a speed asserted.
  it('gives every route a rule, and each caller the answer its key allows', {
    timeout: 300_000,
  }, async () => {
    const routes = routeRules(t.server.app);
    expect(routes.length).toBeGreaterThan(50);
    expect(routes.filter((r) => r.rule === undefined)).toEqual([]);
    const cases = callers();
    const failures: string[] = [];
    let requests = 0;
    const queue = [...routes];
    const next = async (): Promise<void> => {
      for (let route = queue.shift(); route; route = queue.shift()) {
        for (const caller of cases) {
          const want = caller.expect(route.rule!, route.url);
          const got = await call(route, caller).catch((e: Error) => ({ status: 0, code: e.name }));
          requests++;
          const ok =
            want === 'allowed'
              ? got.status !== 401 && got.status !== 403
              : got.status === want.status && (route.method === 'HEAD' || got.code === want.code); // HEAD: no body
          if (!ok)
            failures.push(
              `${route.method} ${route.url} (${route.rule}) as ${caller.name}: got ${got.status} ${got.code}, want ${want === 'allowed' ? 'allowed' : `${want.status} ${want.code}`}`,
            );
        }
      }
    };
    await Promise.all(Array.from({ length: 6 }, next));
    console.log(`authorization: ${routes.length} routes × ${cases.length} callers = ${requests} requests`);
    expect(failures).toEqual([]);
    expect(requests).toBe(routes.length * cases.length);
  });

  it('lets the metrics token read /metrics and nothing else', async () => {
    const metrics = await fetch(`${t.url}/metrics`, { headers: { authorization: 'Bearer scrape-token' } });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^# TYPE weft_runs_started_total counter$/m);
    const runs = await t.call('GET', '/v1/runs', undefined, { authorization: 'Bearer scrape-token' });
    expect(runs).toMatchObject({ status: 401, body: { error: { code: 'key_unknown' } } });
  });
});

describe('keys of one namespace', () => {
  it('refuses a forged report from another namespace, and sees nothing of it', async () => {
    const betaWorker = await makeKey('worker-beta', { role: 'worker', namespaces: ['beta'] });
    const alpha = { authorization: `Bearer ${keys.worker}` };
    const beta = { authorization: `Bearer ${betaWorker}` };
    const polled = await t.call(
      'POST',
      '/v1/tasks/poll',
      { worker: 'w-alpha', task_types: ['guarded.a'], max: 1, wait_ms: 10_000 },
      alpha,
    );
    expect(polled.status).toBe(200);
    const task = polled.body.tasks.find((x: { run_id: string }) => x.run_id === quietRunId);
    expect(task).toBeDefined();
    const forged = {
      worker: 'w-beta',
      reports: [
        {
          run_id: task.run_id,
          task_id: task.task_id,
          attempt: task.attempt,
          lease_token: task.lease_token,
          output: { forged: true },
        },
      ],
    };
    // In its own namespace (no header): the task is not its namespace's, so the report is refused.
    const own = await t.call('POST', '/v1/tasks/report', forged, beta);
    expect(own.status).toBe(200);
    expect(own.body.results).toEqual([
      {
        task_id: task.task_id,
        accepted: false,
        why: expect.stringContaining('belongs to namespace "alpha"'),
      },
    ]);
    // Naming the other namespace: as if it did not exist.
    const named = await t.call('POST', '/v1/tasks/report', forged, { ...beta, 'x-weft-namespace': ALPHA });
    expect(named).toMatchObject({ status: 404, body: { error: { code: 'namespace_not_found' } } });
    const read = await t.call('GET', `/v1/runs/${quietRunId}`, undefined, {
      authorization: `Bearer ${keys.beta}`,
    });
    expect(read).toMatchObject({ status: 404, body: { error: { code: 'run_not_found' } } });
    // The worker that holds the lease still reports; the run takes its output, not the forged one.
    const real = await t.call('POST', '/v1/tasks/report', { ...forged, worker: 'w-alpha' }, alpha);
    expect(real.body.results).toEqual([{ task_id: task.task_id, accepted: true }]);
    const tasks = (await t.call('GET', `/v1/runs/${quietRunId}`, undefined, { 'x-weft-namespace': ALPHA }))
      .body.tasks;
    expect(tasks.find((x: { node_id: string }) => x.node_id === 'a')).toMatchObject({
      output: { forged: true },
    });
    expect((await t.call('GET', '/v1/namespaces', undefined, beta)).status).toBe(403);
    expect(
      (await t.call('GET', '/v1/namespaces', undefined, { authorization: `Bearer ${keys.viewer}` })).body,
    ).toEqual({
      items: [ALPHA],
    });
  });

  it('keeps a worker key to its task types', async () => {
    const typed = await makeKey('worker-typed', {
      role: 'worker',
      namespaces: [ALPHA],
      task_types: ['guarded.a'],
    });
    const poll = (types: string[]) =>
      t.call(
        'POST',
        '/v1/tasks/poll',
        { worker: 'w-typed', task_types: types, wait_ms: 0 },
        {
          authorization: `Bearer ${typed}`,
        },
      );
    expect((await poll(['guarded.a'])).status).toBe(200);
    const other = await poll(['guarded.a', 'payments.charge']);
    expect(other).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect(other.body.error.message).toContain('payments.charge');
  });
});

describe('a route without a rule', () => {
  it('stops the server from starting, naming the route', async () => {
    const app = buildApp({
      engine: new Engine({ store: new MemoryStore() }),
      console: null,
      auth: { mode: 'off' },
    });
    app.get('/v1/unguarded', async () => ({ ok: true }));
    await expect(app.ready()).rejects.toThrow(
      /routes without an auth rule \(config\.auth\): GET \/v1\/unguarded/,
    );
    await app.close().catch(() => {});
  });
});
