import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@weft/postgres';
import { createTestDatabase, TEST_ADMIN_KEY, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A server's log format: JSON lines by default, readable lines with --log-format pretty (WEFT_LOG_FORMAT),
// each with the request's id.

const BIN = fileURLToPath(new URL('../bin/weft.js', import.meta.url));

let db: TestDatabase;
let dir: string;
const children: ChildProcess[] = [];
beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'weft-logs-'));
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function until(check: () => boolean, what: string, output: () => string): Promise<void> {
  const end = Date.now() + 90_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}:\n${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts `weft server`, sends one request with `id`, stops it; returns its standard output. */
async function logOf(env: Record<string, string>, id: string): Promise<string> {
  const child = spawn(
    process.execPath,
    [BIN, 'server', '--database-url', db.url, '--port', '0', '--log-level', 'info'],
    {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', WEFT_BOOTSTRAP_ADMIN_KEY: TEST_ADMIN_KEY, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await until(
    () => /Weft is serving at http/.test(err),
    'the server to start',
    () => err,
  );
  const url = /Weft is serving at (http:\/\/\S+)/.exec(err)![1]!;
  await fetch(`${url}/livez`, { headers: { 'x-request-id': id } });
  await until(
    () => out.includes(id),
    'the access line',
    () => out,
  );
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  return out;
}

describe('log format', { timeout: 240_000 }, () => {
  it('is one JSON object a line by default', async () => {
    const out = await logOf({}, 'json-format-1');
    const lines = out.trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    const access = lines.map((l) => JSON.parse(l)).find((l) => l.request_id === 'json-format-1');
    expect(access).toMatchObject({ msg: 'request', route: '/livez', status: 200, service: 'weft' });
  });

  it('is readable lines with WEFT_LOG_FORMAT=pretty', async () => {
    const out = await logOf({ WEFT_LOG_FORMAT: 'pretty' }, 'pretty-format-1');
    expect(out).not.toMatch(/^\{/m);
    expect(out).toMatch(/^\[[\d:.]+\] INFO: request$/m);
    expect(out).toMatch(/^ {4}request_id: "pretty-format-1"$/m);
    expect(out).toMatch(/^ {4}route: "\/livez"$/m);
    expect(out).toContain('INFO: shutting down');
  });

  // `script` (util-linux) runs the command on a pseudo-terminal, as a person's shell would.
  const hasScript = spawnSync('script', ['--version']).status === 0;
  it.skipIf(!hasScript)(
    'weft dev on a terminal writes readable lines by default (skipped without script(1))',
    async () => {
      const data = join(dir, 'dev-data');
      const port = await freePort();
      const command = `${process.execPath} ${BIN} dev --data ${data} --port ${port} --log-level info`;
      const child = spawn('script', ['-qec', command, '/dev/null'], {
        env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      children.push(child);
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
      });
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      await until(
        () => out.includes('press Ctrl-C to stop'),
        'weft dev to start',
        () => out,
      );
      await fetch(`http://127.0.0.1:${port}/livez`, { headers: { 'x-request-id': 'tty-format-1' } });
      await until(
        () => out.includes('tty-format-1'),
        'the access line',
        () => out,
      );
      process.kill(-child.pid!, 'SIGINT');
      await exited;
      expect(out).toContain('INFO: request');
      expect(out).toContain('request_id: "tty-format-1"');
      expect(out).not.toMatch(/^\{"level"/m);
    },
  );
});
