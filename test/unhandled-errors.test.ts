import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The suite fails when a test leaves an error nobody handled, even if every assertion passed: nothing in
// the configuration or the setup file may swallow it.
describe('an unhandled rejection in a test file', () => {
  it('fails the run', () => {
    const config = fileURLToPath(new URL('./fixtures/unhandled/vitest.config.ts', import.meta.url));
    const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
    const run = spawnSync(process.execPath, [vitest, 'run', '--config', config], {
      encoding: 'utf8',
      env: { ...process.env, CI: '1', FORCE_COLOR: '0' },
      timeout: 120_000,
    });
    const output = run.stdout + run.stderr;
    expect(run.status, output).not.toBe(0);
    expect(output).toContain('planted unhandled rejection');
    expect(output).toMatch(/Unhandled Rejection/i);
  });
});
