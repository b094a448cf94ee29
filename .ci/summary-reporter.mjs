// A Vitest reporter that writes the run's outcome as JSON to a file, for `.ci/totals.mjs` to add up:
// the tests by outcome, and every failure that is not a failed test (a file that did not load, a hook
// that threw, an unhandled error, an interrupted run), which Vitest's own totals line leaves out (a
// failed `beforeAll` shows its tests as skipped). Vitest runs it when WEFT_TEST_SUMMARY names the file
// (see vitest.config.ts). A run that crashes before its end writes nothing, which the totals count as a
// failure too.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';

/** One line of an error's message, short enough for a summary. */
function firstLine(error) {
  const text = String(error?.message ?? error ?? 'unknown error');
  return text.split('\n')[0].slice(0, 300);
}

/** The errors of a module and of each of its suites: load failures and `beforeAll`/`afterAll` hooks. */
function suiteErrors(module, root) {
  const file = relative(root, module.moduleId);
  const found = module.errors().map((e) => ({ file, kind: 'file', message: firstLine(e) }));
  for (const suite of module.children.allSuites()) {
    for (const e of suite.errors())
      found.push({ file, kind: `suite "${suite.fullName}"`, message: firstLine(e) });
  }
  if (found.length === 0 && module.state() === 'failed' && module.children.size === 0) {
    found.push({ file, kind: 'file', message: 'failed without running a test' });
  }
  return found;
}

/** Writes `{tests: {passed, failed, skipped}, failures: [...], unhandledErrors: [...], reason}`. */
export default class SummaryReporter {
  constructor(options = {}) {
    this.outputFile = options.outputFile ?? process.env.WEFT_TEST_SUMMARY;
    this.root = process.cwd();
  }

  onInit(vitest) {
    this.root = vitest.config.root;
  }

  onTestRunEnd(testModules, unhandledErrors, reason) {
    if (!this.outputFile) return;
    const tests = { passed: 0, failed: 0, skipped: 0 };
    const failures = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') tests.passed++;
        else if (state === 'failed') tests.failed++;
        else if (state === 'skipped') tests.skipped++;
        // A test still pending at the end of the run never finished: a failure, not a skip.
        else tests.failed++;
      }
      failures.push(...suiteErrors(module, this.root));
    }
    const summary = {
      tests,
      failures,
      unhandledErrors: unhandledErrors.map((e) => firstLine(e)),
      reason,
    };
    mkdirSync(dirname(this.outputFile), { recursive: true });
    writeFileSync(this.outputFile, `${JSON.stringify(summary, null, 2)}\n`);
  }
}
