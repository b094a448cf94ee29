import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { Worker } from '@weft/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';

const BIN = fileURLToPath(new URL('../bin/weft.js', import.meta.url));
const run = promisify(execFile);

let t: TestServer;
let worker: Worker;
/** Lets the `logs.slow` handler finish. */
let release: () => void = () => {};
const released = new Promise<void>((r) => {
  release = r;
});

function env(): NodeJS.ProcessEnv {
  return { ...process.env, NO_COLOR: '1', WEFT_API_KEY: TEST_ADMIN_KEY, WEFT_URL: t.url };
}

async function weft(args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { env: env() });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

async function eventually<T>(check: () => Promise<T | undefined>, what: string, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  t = await startTestServer();
  await t.call(
    'POST',
    '/v1/definitions',
    'name: logcli\nnodes:\n  - { id: charge, task_type: logs.charge }\n  - { id: ship, task_type: logs.ship }\nedges:\n  - { from: charge, to: ship }\n',
  );
  await t.call('POST', '/v1/definitions', 'name: logslow\nnodes:\n  - { id: wait, task_type: logs.slow }\n');
  worker = new Worker({
    url: t.url,
    apiKey: TEST_ADMIN_KEY,
    logger: null,
    handlers: {
      'logs.charge': (_input, ctx) => {
        ctx.log.info('charging', { amount: 5 });
        ctx.log.error('declined once');
        return 'charged';
      },
      'logs.ship': (_input, ctx) => {
        ctx.log.warn('slow carrier');
        return 'shipped';
      },
      'logs.slow': async (_input, ctx) => {
        ctx.log.info('first');
        await released;
        ctx.log.info('second');
        return null;
      },
    },
  });
  await worker.start();
});
afterAll(async () => {
  release();
  await worker?.stop(5000);
  await t?.close();
});

async function finished(id: string): Promise<void> {
  await eventually(async () => {
    const status = (await t.call('GET', `/v1/runs/${id}`)).body.status;
    return status === 'completed' ? true : undefined;
  }, `run ${id}`);
}

describe('weft runs logs', { timeout: 240_000 }, () => {
  it('prints every line, one node with --node, JSON lines with --json; exit 3 for an unknown run', async () => {
    const id = (await t.call('POST', '/v1/runs', { definition: 'logcli', input: {} })).body.id;
    await finished(id);
    const all = await weft(['runs', 'logs', id]);
    expect(all.code).toBe(0);
    const lines = all.out.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/INFO\s+charge #1\s+charging\s+\{"amount":5\}$/);
    expect(lines[1]).toMatch(/ERROR\s+charge #1\s+declined once$/);
    expect(lines[2]).toMatch(/WARN\s+ship #1\s+slow carrier$/);
    const ship = await weft(['runs', 'logs', id, '--node', 'ship']);
    expect(ship.out.trimEnd().split('\n')).toHaveLength(1);
    const json = await weft(['runs', 'logs', id, '--json', '--attempt', '1']);
    const parsed = json.out
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(parsed.map((l) => [l.node_id, l.level, l.message])).toEqual([
      ['charge', 'info', 'charging'],
      ['charge', 'error', 'declined once'],
      ['ship', 'warn', 'slow carrier'],
    ]);
    const unknown = await weft(['runs', 'logs', '01900000-0000-7000-8000-000000000042']);
    expect(unknown.code).toBe(3);
    expect((await weft(['runs', 'logs', id, '--attempt', '0'])).code).toBe(2);
  });

  it('--follow prints new lines as they come and ends once the run has finished', async () => {
    const id = (await t.call('POST', '/v1/runs', { definition: 'logslow', input: {} })).body.id;
    const child = spawn(process.execPath, [BIN, 'runs', 'logs', id, '--follow'], { env: env() });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
    // The first line shows while the handler still waits; then it finishes, and so does --follow.
    await eventually(async () => (/first/.test(out) ? true : undefined), 'the first line');
    expect(out).not.toMatch(/second/);
    release();
    expect(await exited).toBe(0);
    expect(
      out
        .trimEnd()
        .split('\n')
        .map((l) => l.replace(/^.*#1\s+/, '')),
    ).toEqual(['first', 'second']);
  });
});
