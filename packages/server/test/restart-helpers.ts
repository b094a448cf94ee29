import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEST_ADMIN_KEY } from '@weft/testing';

const CLI = fileURLToPath(new URL('../../cli/dist/main.js', import.meta.url));

/** A `weft server` process and everything it printed. */
export interface ServerProcess {
  readonly child: ChildProcess;
  readonly url: string;
  output(): string;
  /** Sends SIGTERM and waits for the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `weft server` on a PostgreSQL URL and waits (up to a minute) until it says where it serves. */
export async function startServerProcess(databaseUrl: string, port: number): Promise<ServerProcess> {
  const args = [CLI, 'server', '--database-url', databaseUrl, '--port', String(port)];
  args.push('--lease', '5s', '--heartbeat', '1s', '--log-level', 'warn');
  // The test's admin key is made on start, so the test's client and worker can call the server.
  const env = { ...process.env, WEFT_BOOTSTRAP_ADMIN_KEY: TEST_ADMIN_KEY };
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`weft server did not start:\n${text}`)), 60_000);
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('Weft is serving at')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`weft server exited with ${code}:\n${text}`)));
  });
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    output: () => text,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** The pid of the postmaster of a data folder (from postmaster.pid). */
export async function postmasterPid(pgdata: string): Promise<number> {
  const text = await readFile(join(pgdata, 'postmaster.pid'), 'utf8');
  return Number(text.split('\n')[0]);
}

/** Whether a process id is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits for `check` to hold, polling every `everyMs`, up to `withinMs`; returns how long it took. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean> | boolean,
  withinMs: number,
  everyMs = 100,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > withinMs)
      throw new Error(`timed out after ${withinMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** GET a path; status and parsed JSON body, or status 0 when the server does not answer. */
export async function get(url: string, timeoutMs = 5000): Promise<{ status: number; body: any }> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  } catch {
    return { status: 0, body: null };
  }
}
