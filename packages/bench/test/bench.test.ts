import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

// Keeps the benchmark working: every workload at a tiny size on both paths (server and embedded), every
// phase, both floors, the JSON. Nothing here is timed; speed is for `npm run bench` to show.
describe('npm run bench', () => {
  it('runs W1 to W4 at a tiny size on both paths and writes every figure', async () => {
    const out = await mkdtemp(join(tmpdir(), 'weft-bench-'));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        MAIN,
        '--database-url',
        process.env.WEFT_TEST_ADMIN_URL!,
        '--db-name',
        `${process.env.WEFT_TEST_PREFIX}_bench`,
        '--runs',
        '4',
        '--map-items',
        '20',
        '--repeat',
        '1',
        '--workers',
        '1',
        '--concurrency',
        '16',
        '--few',
        '2',
        '--rate',
        '200',
        '--out',
        out,
      ],
      { timeout: 480_000 },
    );
    expect(stdout).toMatch(/workload\s+path\s+runs\s+steps\s+wall s\s+steps\/s/);
    const file = /results: (.+\.json)/.exec(stdout)![1]!;
    const results = JSON.parse(await readFile(file, 'utf8'));
    expect(results.medians.map((m: { workload: string; path: string }) => `${m.workload} ${m.path}`)).toEqual(
      [
        'W1 server',
        'W1 embedded',
        'W2 server',
        'W2 embedded',
        'W3 server',
        'W3 embedded',
        'W4 server',
        'W4 embedded',
      ],
    );
    for (const m of results.medians) {
      expect(m.steps).toBe({ W1: 4 * 6, W2: 4 * 10, W3: 4 * 102, W4: 4 * 20 }[m.workload as 'W1']);
      for (const field of [
        'stepsPerSec',
        'runsPerSec',
        'commitsPerStep',
        'statementsPerStep',
        'walBytesPerStep',
        'serverRssMb',
        'readsPerEvent',
      ]) {
        expect(m[field], `${m.workload} ${m.path} ${field}`).toBeGreaterThan(0);
      }
      // The embedded path has no worker processes; its one process is in the server columns.
      if (m.path === 'server') {
        expect(m.workerRssMb).toBeGreaterThan(0);
        // Private memory is part of the RSS, without the shared pages of the Node binary.
        expect(m.workerPrivateMb).toBeGreaterThan(0);
        expect(m.workerPrivateMb).toBeLessThan(m.workerRssMb);
      } else {
        expect(m.workerRssMb).toBe(0);
        expect(m.workerPrivateMb).toBe(0);
      }
      expect(m.cpuPerStep.server).toBeGreaterThan(0);
      // The burst ends when its last run is seen completed in PostgreSQL, which is after its last handler
      // ended (that run's report and decision still had to commit), on both paths.
      expect(m.wallMs).toBeGreaterThan(m.handlersWallMs);
      expect(m.stepsPerSec).toBeCloseTo(m.steps / (m.wallMs / 1000), 6);
      // On the embedded path every run's result is awaited in its process; it arrives after the commit.
      if (m.path === 'embedded') expect(m.resultsWallMs).toBeGreaterThan(0);
      else expect(m.resultsWallMs).toBeNull();
      // W4's twenty items all start at once (its map runs 500 at once): each is a first task, none a step after
      // another, so it has first-task latencies only.
      if (m.workload === 'W4') expect(m.paced.stepP50).toBeNull();
      else expect(m.paced.stepP50).toBeGreaterThanOrEqual(0);
      expect(m.paced.firstP50).toBeGreaterThan(0);
      expect(m.paced.cpuPerStep.server).toBeGreaterThan(0);
      // The fixed-rate phase starts runs at the rate asked for, whatever the burst's throughput.
      expect(m.fixed.load).toBe(`200 steps/s: ${(200 / (m.steps / 4)).toFixed(0)} runs/s`);
      if (m.workload !== 'W4') expect(m.fixed.stepP99).toBeGreaterThanOrEqual(m.fixed.stepP50);
      expect(m.fixed.cpuPerStep.server).toBeGreaterThan(0);
      expect(m.burst.firstP50).toBeGreaterThan(0);
    }
    const w2 = results.medians.filter((m: { workload: string }) => m.workload === 'W2');
    for (const m of w2) {
      expect(m.few.stepP99).toBeGreaterThanOrEqual(0);
      expect(m.few.cpuPerStep.server).toBeGreaterThan(0);
    }
    // embedded / server, workload by workload, from the medians.
    expect(results.ratios.map((r: { workload: string }) => r.workload)).toEqual(['W1', 'W2', 'W3', 'W4']);
    for (const r of results.ratios) {
      const [server, embedded] = results.medians.filter(
        (m: { workload: string }) => m.workload === r.workload,
      );
      expect(r.stepsPerSec).toBeCloseTo(embedded.stepsPerSec / server.stepsPerSec, 9);
      expect(r.commitsPerStep).toBeCloseTo(embedded.commitsPerStep / server.commitsPerStep, 9);
    }
    expect(results.options.embeddedConcurrency).toBe(16);
    // The flags the worker processes ran with are printed and kept, as the worker SDK's README advises them
    // for handlers that wait (decision 0188).
    const flags = '--max-semi-space-size=1 --initial-old-space-size=4 --no-turbofan';
    expect(stdout).toContain(`each run as node ${flags}.`);
    expect(results.options.workerNodeFlags.join(' ')).toBe(flags);
    expect(stdout).toMatch(/W2\s+emb\/srv\s+x\d/);
    expect(results.floorStepsPerSec).toBeGreaterThan(0);
    expect(results.floorFewStepMs).toBeGreaterThan(0);
    // The protocol floor: W2's latency phases against a server with no engine, at the same arrivals.
    for (const phase of ['paced', 'fixed', 'few']) {
      expect(results.protocolFloor[phase].stepP99).toBeGreaterThanOrEqual(
        results.protocolFloor[phase].stepP50,
      );
      expect(results.protocolFloor[phase].firstP50).toBeGreaterThan(0);
      expect(Number.isFinite(results.protocolFloor[phase].cpuPerStep.server)).toBe(true);
    }
    expect(results.protocolFloor.fixed.load).toBe(w2[0].fixed.load);
    expect(stdout).toMatch(/W2 floor few/);
    expect(stdout).toMatch(/CPU ms\/step srv\/wrk\/pg in the latency phases/);
  }, 500_000);

  it('--paths refuses a path it does not know, naming the ones it does', async () => {
    const run = promisify(execFile)(process.execPath, [MAIN, '--paths', 'server,inprocess'], {
      timeout: 60_000,
    });
    await expect(run).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('unknown path "inprocess" in --paths; choose from server, embedded'),
    });
  });

  it('--list seeds finished runs and measures every list call of the console', async () => {
    const out = await mkdtemp(join(tmpdir(), 'weft-bench-list-'));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        MAIN,
        '--list',
        '--list-runs',
        '3000',
        '--list-samples',
        '3',
        '--database-url',
        process.env.WEFT_TEST_ADMIN_URL!,
        '--db-name',
        `${process.env.WEFT_TEST_PREFIX}_bench`,
        '--out',
        out,
      ],
      { timeout: 200_000 },
    );
    expect(stdout).toMatch(/Runs list over HTTP, 3,000 finished runs/);
    const file = /results: (.+\.json)/.exec(stdout)![1]!;
    const results = JSON.parse(await readFile(file, 'utf8'));
    const by = Object.fromEntries(results.results.map((r: { name: string }) => [r.name, r]));
    expect(by['no filter'].items).toBe(50);
    expect(by['next page (cursor)'].items).toBe(50);
    expect(by['run id (whole)'].items).toBe(1);
    // Every filter finds rows in the seeded month (3% of 3,000 runs terminated is 30: a short page).
    expect(by['status=terminated (1%)'].items).toBe(30);
    for (const r of results.results) {
      expect(r.items, r.name).toBeGreaterThan(0);
      expect(r.p99Ms, r.name).toBeGreaterThanOrEqual(r.p50Ms);
    }
  }, 240_000);
});
