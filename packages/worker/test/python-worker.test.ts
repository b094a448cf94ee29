import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers.js';

// The Python worker SDK (sdk/python) against a real server on real PostgreSQL: its own unittest modules
// run with the server's URL in WEFT_TEST_URL, and the example order worker runs as a separate process.

const SDK = fileURLToPath(new URL('../../../sdk/python/', import.meta.url));
const ORDERS = fileURLToPath(new URL('../../../examples/order-fulfilment.yaml', import.meta.url));

/** python3 when it is on PATH and 3.9 or later; otherwise null, after saying why the tests skip. */
function findPython(): string | null {
  const probe = spawnSync('python3', ['-c', 'import sys; print(sys.version_info >= (3, 9))'], {
    encoding: 'utf8',
  });
  if (probe.error || probe.status !== 0) {
    console.warn(
      'skipping the Python worker SDK tests: python3 is not on PATH (install Python 3.9 or later)',
    );
    return null;
  }
  if (probe.stdout.trim() !== 'True') {
    console.warn('skipping the Python worker SDK tests: python3 is older than 3.9, which the SDK needs');
    return null;
  }
  return 'python3';
}

const python = findPython();

/** Skips the Python tests may make, and only these: each names what is missing. */
const ALLOWED_SKIPS = [/needs the openssl command/, /needs setuptools/];

/** What `python3 -m tests.report` prints last: tests run, skipped and failed (with their reasons). */
interface Summary {
  ran: number;
  skipped: [string, string][];
  failed: [string, string][];
}

/** Runs one unittest module of the SDK; rejects with its whole output when it fails or skips unexpectedly. */
function unittest(module: string, env: Record<string, string>): Promise<Summary> {
  return new Promise((resolve, reject) => {
    const child = spawn(python!, ['-m', 'tests.report', module], {
      cwd: SDK,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? '';
      let summary: Summary;
      try {
        summary = JSON.parse(last) as Summary;
      } catch {
        reject(new Error(`${module} printed no summary (exit ${code}):\n${output}`));
        return;
      }
      const unexpected = summary.skipped.filter(([, why]) => !ALLOWED_SKIPS.some((a) => a.test(why)));
      if (code !== 0 || summary.failed.length > 0 || unexpected.length > 0 || summary.ran === 0)
        reject(new Error(`${module} did not pass (exit ${code}):\n${output}`));
      else resolve(summary);
    });
  });
}

async function waitForRun(t: TestServer, id: string, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const run = (await t.call('GET', `/v1/runs/${id}`)).body;
    if (run.status !== 'running') return run;
    if (Date.now() > end) throw new Error(`run ${id} is still running`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

describe.skipIf(!python)('Python worker SDK', () => {
  let t: TestServer;
  beforeAll(async () => {
    // Short leases: a lost lease shows within seconds, and a task held longer than one needs heartbeats.
    t = await startTestServer({ leaseMs: 2000, heartbeatMs: 250, leasePollMs: 100 });
  });
  afterAll(async () => {
    await t?.close();
  });

  const modules: [string, string][] = [
    ['tests.test_wire', 'reads leased tasks and writes reports and batches as the protocol says'],
    ['tests.test_options', 'checks its options and connection settings where they enter'],
    ['tests.test_reports', 'batches, splits refused batches and renews leases of unsent reports'],
    ['tests.test_packaging', 'is a package with no dependencies'],
    ['tests.test_connection', 'fails fast, sends the API key and headers, and logs outages once'],
    ['tests.test_tls', 'speaks TLS with a CA of its own and client certificates'],
    ['tests.test_runs', 'completes, retries and fails runs, concurrently, on a real server'],
    ['tests.test_leases', 'keeps, loses and gives up leases, and stops gracefully or hard'],
    ['tests.test_process', 'stops a worker process on SIGTERM, and hard on a second signal'],
    ['tests.test_logs', 'sends ctx.log lines before the report; a lost lease drops them'],
  ];
  for (const [module, what] of modules) {
    it(`${what} (${module})`, { timeout: 240_000 }, async () => {
      const summary = await unittest(module, { WEFT_TEST_URL: t.url, WEFT_TEST_API_KEY: TEST_ADMIN_KEY });
      for (const [id, why] of summary.skipped) console.warn(`python: ${id} skipped: ${why}`);
      expect(summary.failed).toEqual([]);
      expect(summary.ran).toBeGreaterThan(summary.skipped.length);
    });
  }

  it('runs the example order workflow with the example Python worker as a separate process', async () => {
    const deployed = await t.call('POST', '/v1/definitions', readFileSync(ORDERS, 'utf8'));
    expect(deployed.status).toBeLessThan(300);
    const ids: string[] = [];
    for (let n = 0; n < 10; n++) {
      const input = {
        order_id: `o-${n}`,
        email: `c${n}@example.com`,
        amount: 10 + n,
        items: [{ sku: 'a', qty: 1 }],
      };
      const started = await t.call('POST', '/v1/runs', { definition: 'order-fulfilment', input });
      expect(started.status).toBe(201);
      ids.push(started.body.id);
    }
    const child = spawn(python!, ['examples/order_worker.py'], {
      cwd: SDK,
      env: {
        ...process.env,
        PYTHONDONTWRITEBYTECODE: '1',
        PYTHONPATH: SDK,
        WEFT_URL: t.url,
        WEFT_API_KEY: TEST_ADMIN_KEY,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    try {
      const runs = await Promise.all(ids.map((id) => waitForRun(t, id)));
      expect(runs.map((r) => r.status)).toEqual(ids.map(() => 'completed'));
      runs.forEach((run, n) => {
        expect(run.output.order_id).toBe(`o-${n}`);
        expect(run.output.tracking).toBe(`TRK-o-${n}`);
        expect(run.output.payment).toMatch(/^pay_[0-9a-f]{8}$/);
      });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited(child)).toBe(0);
    expect(log).toMatch(/worker \S+ takes orders\.validate, inventory\.reserve/);
    expect(log).toMatch(/worker \S+ stopped: WorkerStats\(completed=\d+/);
  });
});
