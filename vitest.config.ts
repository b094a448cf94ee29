import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// With WEFT_TEST_SUMMARY set (CI sets it), the run's outcome is also written to that file as JSON, for
// .ci/totals.mjs to count.
const summary = process.env.WEFT_TEST_SUMMARY
  ? [fileURLToPath(new URL('./.ci/summary-reporter.mjs', import.meta.url))]
  : [];

// Each test file gets its own PostgreSQL database (see packages/testing), so files run in parallel.
// Two cores: three forks keep both busy while one waits on PostgreSQL.
export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'examples/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['packages/testing/dist/global-setup.js'],
    // Unhandled errors fail the run; this checks that no test file leaves a listener that would hide them.
    setupFiles: ['test/unhandled-errors.setup.ts'],
    pool: 'forks',
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default', ...summary],
  },
});
