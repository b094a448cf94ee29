import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, TEST_ADMIN_KEY, TEST_AUTH_HEADERS, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// SIGTERM to `weft server` with workers long-polling and a request in flight: the polls answer at once with
// no tasks, the request in flight (held on a run's row lock by this test) still finishes and commits, a
// request arriving after the signal is refused (503 shutting_down), the process logs each step and exits 0. With a grace period too
// short for the request in flight, it exits 1 saying so.

const BIN = fileURLToPath(new URL('../bin/weft.js', import.meta.url));
const JSON_HEADERS = { 'content-type': 'application/json', ...TEST_AUTH_HEADERS };

let db: TestDatabase;
let dir: string;
const children: ChildProcess[] = [];
const locks: (() => void)[] = [];
beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'weft-shutdown-'));
});
afterAll(async () => {
  for (const release of locks) release();
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

/** Waits for `check` to hold, bounded by `ms` (the bound is for what never comes, not a measure). */
async function eventually(check: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Server {
  readonly child: ChildProcess;
  readonly url: string;
  readonly port: number;
  output(): string;
  /** Standard output alone: the JSON log. */
  log(): string;
  readonly exited: Promise<{ code: number | null; at: number }>;
}

/** Starts `weft server` on the test database and resolves once it serves. */
async function startServer(extra: string[]): Promise<Server> {
  const child = spawn(
    process.execPath,
    [BIN, 'server', '--database-url', db.url, '--port', '0', '--log-level', 'info', ...extra],
    {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', WEFT_BOOTSTRAP_ADMIN_KEY: TEST_ADMIN_KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  let out = '';
  let log = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    log += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<{ code: number | null; at: number }>((r) =>
    child.once('exit', (code) => r({ code, at: Date.now() })),
  );
  await Promise.race([
    eventually(() => /Weft is serving at http/.test(out), 90_000, 'the server to start'),
    exited.then(() => {
      throw new Error(`weft server exited before serving:\n${out}`);
    }),
  ]);
  const url = /Weft is serving at (http:\/\/\S+)/.exec(out)![1]!;
  return { child, url, port: Number(new URL(url).port), output: () => out, log: () => log, exited };
}

/** Deploys a one-task definition and starts a run of it; returns the run id. */
async function startRun(url: string, name: string): Promise<string> {
  const deployed = await fetch(`${url}/v1/definitions`, {
    method: 'POST',
    headers: { 'content-type': 'application/yaml', ...TEST_AUTH_HEADERS },
    body: `name: ${name}\nnodes:\n  - { id: a, task_type: ${name}.a }\n`,
  });
  expect(deployed.status).toBe(201);
  const started = await fetch(`${url}/v1/runs`, {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ definition: name, input: {} }),
  });
  return ((await started.json()) as { id: string }).id;
}

/** Holds the run's row lock in a transaction of its own until `release` is called. */
function holdRunLock(runId: string): { held: Promise<void>; release: () => void; done: Promise<unknown> } {
  let release!: () => void;
  let held!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  const heldP = new Promise<void>((r) => {
    held = r;
  });
  locks.push(release);
  const done = db.sql.begin(async (tx) => {
    await tx`SELECT 1 FROM weft.runs WHERE id = ${runId}::uuid FOR UPDATE`;
    held();
    await released;
  });
  return { held: heldP, release, done };
}

/** True once a server connection waits for a row lock. */
async function serverWaitsForLock(): Promise<boolean> {
  const rows = await db.sql`SELECT 1 FROM pg_stat_activity
    WHERE application_name = 'weft-server' AND wait_event_type = 'Lock'`;
  return rows.length > 0;
}

/** A raw HTTP/1.1 connection: what was written so far is sent, and the answers are kept as text. */
function rawConnection(port: number): {
  send: (text: string) => void;
  text: () => string;
  ended: Promise<string>;
} {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (d: Buffer) => {
    text += d.toString();
  });
  const ended = new Promise<string>((resolve) => {
    socket.on('close', () => resolve(text));
    socket.on('error', () => resolve(text));
  });
  return { send: (t) => socket.write(t), text: () => text, ended };
}

const AUTH_LINE = `authorization: Bearer ${TEST_ADMIN_KEY}\r\n`;

/** Sends a cancel of `runId` on a connection of its own. */
function sendCancel(port: number, runId: string): ReturnType<typeof rawConnection> {
  const c = rawConnection(port);
  const body = '{"reason":"stopping"}';
  c.send(
    `POST /v1/runs/${runId}/cancel HTTP/1.1\r\nhost: x\r\n${AUTH_LINE}content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
  );
  return c;
}

/** HTTP status codes in raw answers. */
function statuses(raw: string): number[] {
  return [...raw.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));
}

/** JSON log lines of the server's standard output. */
function logLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

// Real processes on a loaded machine: a wider bound than the suite's 60 s.
describe('weft server on SIGTERM', { timeout: 240_000 }, () => {
  it('answers waiting polls at once with no tasks, finishes the request in flight, refuses new ones, logs each step and exits 0', async () => {
    const server = await startServer(['--shutdown-grace', '20s']);
    const runId = await startRun(server.url, 'drained');
    const lock = holdRunLock(runId);
    await lock.held;
    const inFlight = sendCancel(server.port, runId);
    await eventually(serverWaitsForLock, 60_000, 'the cancel to wait for the run lock');
    // A request on its way in when the signal comes: its first line is read, the rest arrives after.
    const arriving = rawConnection(server.port);
    arriving.send(`GET /readyz HTTP/1.1\r\nhost: x\r\n`);

    // Workers long-polling for a type nobody queues: they would wait 30 s (the server's cap) for nothing.
    const early: string[] = [];
    const polls = [1, 2, 3].map(async (n) => {
      const r = await fetch(`${server.url}/v1/tasks/poll`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ worker: `w${n}`, task_types: ['nobody.queues'], wait_ms: 60_000 }),
      });
      const answer = { status: r.status, body: (await r.json()) as { tasks: unknown[] }, at: Date.now() };
      early.push(`poll ${n}: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer;
    });
    // Each poll has reached its handler (it is listed as seen) and is waiting (the gauge also counts the
    // server's own system-task poll, when it waits).
    let seen = '';
    let metrics = '';
    await eventually(
      async () => {
        seen = await (await fetch(`${server.url}/v1/workers`, { headers: TEST_AUTH_HEADERS })).text();
        metrics = await (await fetch(`${server.url}/metrics`, { headers: TEST_AUTH_HEADERS })).text();
        const names = ((JSON.parse(seen) as { items: { name: string }[] }).items ?? []).map((w) => w.name);
        const gauge = Number(/^weft_polls_waiting (\d+)$/m.exec(metrics)?.[1] ?? 0);
        return ['w1', 'w2', 'w3'].every((w) => names.includes(w)) && gauge >= 3;
      },
      60_000,
      'three polls waiting',
    ).catch((e) => {
      const gauge = metrics.split('\n').filter((l) => l.startsWith('weft_polls_waiting'));
      throw new Error(
        `${e.message}: ${gauge.join(' ')}; workers: ${seen}; answered so far: ${early.join('; ') || 'none'}; server log:\n${server.output().slice(-3000)}`,
      );
    });
    expect(early).toEqual([]);

    const signalled = Date.now();
    server.child.kill('SIGTERM');
    const answered = await Promise.all(polls);
    // The polls answered while the cancel was still held on the lock: they did not wait for the drain.
    expect(inFlight.text()).toBe('');
    for (const p of answered) {
      expect(p.status).toBe(200);
      expect(p.body.tasks).toEqual([]);
    }
    // New connections are no longer taken.
    await eventually(
      () =>
        fetch(`${server.url}/livez`).then(
          () => false,
          () => true,
        ),
      60_000,
      'new connections to be refused',
    );
    expect(server.child.exitCode).toBeNull();
    // The request that arrives during the drain is refused with 503 shutting_down, and its connection closed.
    arriving.send(`${AUTH_LINE}\r\n`);
    const refused = await arriving.ended;
    expect(statuses(refused), refused).toEqual([503]);
    expect(refused).toContain('"code":"shutting_down"');
    expect(server.child.exitCode).toBeNull();

    const releasedAt = Date.now();
    lock.release();
    await lock.done;
    const raw = await inFlight.ended;
    const exit = await server.exited;

    // The request in flight finished and committed.
    expect(statuses(raw), raw).toEqual([200]);
    const [row] = await db.sql<{ status: string }[]>`SELECT status FROM weft.runs WHERE id = ${runId}::uuid`;
    expect(row?.status).toBe('cancelled');

    expect(exit.code, server.output()).toBe(0);
    // Each step said, in order: the CLI's lines on standard error, the server's log on standard output.
    const inOrder = (text: string, steps: string[]) => {
      const at = steps.map((step) => text.indexOf(step));
      expect(Math.min(...at), `${steps.join(', ')} in:\n${text}`).toBeGreaterThanOrEqual(0);
      expect(at).toEqual([...at].sort((a, b) => a - b));
    };
    const out = server.output();
    inOrder(out.replace(server.log(), ''), ['SIGTERM: stopping the server', 'stopped']);
    inOrder(server.log(), [
      'shutting down: new requests are refused',
      'HTTP server closed: every request in flight has been answered',
      'background loops stopped',
      'database connections closed',
    ]);
    // The polls' and the cancel's access lines, each with its request id.
    const access = logLines(out).filter((l) => l.msg === 'request');
    expect(access.filter((l) => l.route === '/v1/tasks/poll' && l.status === 200)).toHaveLength(3);
    expect(access.find((l) => l.route === '/v1/runs/:id/cancel')?.status).toBe(200);
    for (const l of access) expect(l.request_id).toEqual(expect.any(String));

    const slowestPoll = Math.max(...answered.map((p) => p.at)) - signalled;
    console.log(
      `shutdown figures: polls answered ${slowestPoll} ms after SIGTERM; exit ${exit.at - releasedAt} ms after the request in flight was let go (${exit.at - signalled} ms after SIGTERM, most of it the test holding the lock)`,
    );
  });

  it('exits 1 when the grace period ends with a request still in flight, saying so', async () => {
    const server = await startServer(['--shutdown-grace', '1s']);
    const runId = await startRun(server.url, 'overdue');
    const lock = holdRunLock(runId);
    await lock.held;
    const inFlight = sendCancel(server.port, runId);
    await eventually(serverWaitsForLock, 60_000, 'the cancel to wait for the run lock');
    server.child.kill('SIGTERM');
    const exit = await server.exited;
    lock.release();
    await lock.done;
    await inFlight.ended;
    expect(exit.code, server.output()).toBe(1);
    expect(server.output()).toContain('the shutdown grace period (1000 ms) is over');
    // The cancel never committed: PostgreSQL rolled it back when the process went.
    const [row] = await db.sql<{ status: string }[]>`SELECT status FROM weft.runs WHERE id = ${runId}::uuid`;
    expect(row?.status).toBe('running');
  });
});
