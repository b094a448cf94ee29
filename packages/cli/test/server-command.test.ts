import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestDatabase, TEST_ADMIN_KEY, TEST_AUTH_HEADERS, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servingAt } from './serving-at.js';

// `weft server` as a user runs it: a process of its own on a PostgreSQL given by --database-url, serving
// the API until it is sent SIGTERM.

const BIN = fileURLToPath(new URL('../bin/weft.js', import.meta.url));
const exec = promisify(execFile);

let db: TestDatabase;
let dir: string;
let child: ChildProcess | null = null;
beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'weft-server-'));
});
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

// Real processes on a loaded machine: a wider bound than the suite's 60 s.
describe('weft server', { timeout: 180_000 }, () => {
  it('serves the API on the given PostgreSQL and stops cleanly on SIGTERM', async () => {
    child = spawn(
      process.execPath,
      [BIN, 'server', '--database-url', db.url, '--port', '0', '--log-level', 'silent'],
      // In a folder of its own: the server keeps large payloads under .weft/ where it runs.
      // With its first admin key given as WEFT_BOOTSTRAP_ADMIN_KEY: it serves nothing without one.
      {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', WEFT_BOOTSTRAP_ADMIN_KEY: TEST_ADMIN_KEY },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const url = await servingAt(child);
    expect((await fetch(`${url}/v1/runs`)).status).toBe(401);
    // The web console, built by `npm run build`, on the same port: its page needs no key, its calls do.
    const consolePage = await fetch(`${url}/`, { headers: { accept: 'text/html' } });
    expect(consolePage.status).toBe(200);
    expect(await consolePage.text()).toContain('<title>Weft console</title>');
    const deployed = await fetch(`${url}/v1/definitions`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml', ...TEST_AUTH_HEADERS },
      body: 'name: served\nnodes:\n  - { id: a, task_type: served.a }\n',
    });
    expect(deployed.status).toBe(201);
    const started = await fetch(`${url}/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...TEST_AUTH_HEADERS },
      body: JSON.stringify({ definition: 'served', input: {} }),
    });
    const { id } = (await started.json()) as { id: string };
    // The run is in the database the command was given.
    const [row] = await db.sql<{ status: string }[]>`SELECT status FROM weft.runs WHERE id = ${id}::uuid`;
    expect(row?.status).toBe('running');
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('refuses to start without a database, saying what to set', async () => {
    const failed = await exec(process.execPath, [BIN, 'server'], {
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' },
    }).catch((e: { code: number; stderr: string }) => e);
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stderr: string }).stderr).toMatch(/set DATABASE_URL or pass --database-url/);
  });

  it('refuses to start with a trace exporter it cannot use, naming the variable', async () => {
    const failed = await exec(
      process.execPath,
      [BIN, 'server', '--database-url', db.url, '--port', '0', '--log-level', 'silent'],
      {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? '',
          NO_COLOR: '1',
          WEFT_BOOTSTRAP_ADMIN_KEY: TEST_ADMIN_KEY,
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317',
          OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        },
      },
    ).catch((e: { code: number; stderr: string }) => e);
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stderr: string }).stderr).toMatch(
      /set OTEL_EXPORTER_OTLP_PROTOCOL to http\/protobuf or http\/json/,
    );
  });

  it('traces requests when the OTEL_* variables ask for it', async () => {
    const traced = spawn(
      process.execPath,
      [BIN, 'server', '--database-url', db.url, '--port', '0', '--log-level', 'silent'],
      {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? '',
          NO_COLOR: '1',
          WEFT_BOOTSTRAP_ADMIN_KEY: TEST_ADMIN_KEY,
          OTEL_TRACES_EXPORTER: 'console',
          OTEL_BSP_SCHEDULE_DELAY: '100',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child = traced;
    let out = '';
    traced.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const url = await servingAt(traced);
    expect((await fetch(`${url}/v1/runs`)).status).toBe(401);
    // The console exporter prints each span on standard output (the logs are silent).
    const until = Date.now() + 30_000;
    while (!out.includes("'GET /v1/runs'") && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(out).toContain("'GET /v1/runs'");
    expect(out).toContain("'http.response.status_code': 401");
    const exited = new Promise<number | null>((r) => traced.once('exit', (code) => r(code)));
    traced.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
