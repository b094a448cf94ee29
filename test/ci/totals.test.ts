import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// CI's closing line (.ci/run → .ci/totals.mjs), checked against real Vitest runs of the small projects in
// fixtures/: one clean, one with each kind of failure Vitest's own totals line leaves out, and one whose
// configuration cannot load (a run that ends before writing its summary).
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = join(ROOT, 'test/ci/fixtures');
const VITEST = join(ROOT, 'node_modules/vitest/vitest.mjs');
const TOTALS = join(ROOT, '.ci/totals.mjs');

interface Outcome {
  code: number;
  stdout: string;
}

/** Runs a program to its end, whatever its exit code. */
function exec(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Outcome> {
  // The outer run's own Vitest variables (and summary file) must not leak into the runs it starts.
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'WEFT_TEST_SUMMARY'),
  );
  return new Promise((resolve) => {
    execFile(process.execPath, args, { env: { ...clean, NO_COLOR: '1', ...env } }, (error, stdout) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout });
    });
  });
}

/** Runs Vitest on one fixture project, its summary written to `out`. */
function vitest(project: string, out: string, config = 'vitest.config.ts'): Promise<Outcome> {
  const args = [VITEST, 'run', '--root', join(FIXTURES, project), '--config', join(FIXTURES, config)];
  return exec(args, { WEFT_TEST_SUMMARY: out });
}

/** The totals script's output lines and exit code. */
async function totals(...args: string[]): Promise<{ code: number; lines: string[] }> {
  const { code, stdout } = await exec([TOTALS, ...args]);
  return { code, lines: stdout.trim().split('\n') };
}

let dir: string;
const summary = (name: string) => join(dir, `${name}.json`);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weft-totals-'));
  await Promise.all([
    vitest('clean', summary('clean')),
    vitest('broken', summary('broken')),
    vitest('clean', summary('crashed'), 'crash.config.ts'),
  ]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('.ci/totals.mjs', () => {
  it('prints passed, failed and skipped tests as its last line, ignoring output that looks like totals', async () => {
    const { code, lines } = await totals('--suite', summary('clean'));
    expect(lines).toEqual(['2 passed, 0 failed, 1 skipped']);
    expect(code).toBe(0);
  });

  it('counts a file that did not load, a failed beforeAll or afterAll and an unhandled error as failed', async () => {
    const { code, lines } = await totals('--suite', summary('broken'));
    // One failed test, plus the four failures outside a test; the beforeAll's test shows as skipped.
    expect(lines.at(-1)).toBe('3 passed, 5 failed, 1 skipped');
    const reasons = lines.slice(0, -1).join('\n');
    expect(reasons).toContain('load.fixture.ts (file): this file cannot load');
    expect(reasons).toContain('before-all.fixture.ts (suite "a suite whose setup fails"): setup failed');
    expect(reasons).toContain('after-all.fixture.ts (file): teardown failed');
    expect(reasons).toContain('unhandled error: nobody waited for this');
    expect(code).toBe(1);
  });

  it('counts a run that ended before writing its summary as failed', async () => {
    const { code, lines } = await totals('--suite', summary('crashed'));
    expect(lines.at(-1)).toBe('0 passed, 1 failed');
    expect(lines[0]).toContain('no summary was written');
    expect(code).toBe(1);
  });

  it('reports the second run on its own line and counts each test once', async () => {
    const { code, lines } = await totals('--suite', summary('clean'), '--again', summary('clean'));
    expect(lines).toEqual([
      "again on the machine's PostgreSQL: 2 passed, 0 failed, 1 skipped",
      '2 passed, 0 failed, 1 skipped',
    ]);
    expect(code).toBe(0);
  });

  it('fails when the second run crashed before its summary, or failed', async () => {
    const crashed = await totals('--suite', summary('clean'), '--again', summary('crashed'));
    expect(crashed.lines.at(-2)).toBe("again on the machine's PostgreSQL: 0 passed, 1 failed");
    expect(crashed.lines.at(-1)).toBe('2 passed, 1 failed, 1 skipped');
    expect(crashed.code).toBe(1);

    const failed = await totals('--suite', summary('clean'), '--again', summary('broken'));
    expect(failed.lines.at(-2)).toBe("again on the machine's PostgreSQL: 3 passed, 5 failed, 1 skipped");
    expect(failed.lines.at(-1)).toBe('2 passed, 5 failed, 1 skipped');
    expect(failed.code).toBe(1);
  });
});
