// Adds up what the test runs wrote (see summary-reporter.mjs) and prints the totals; the last line is
// plain: "N passed, N failed" (", N skipped" when any were).
//
//   node .ci/totals.mjs --suite <file> [--again <file>]
//
// --suite is the whole suite's summary; --again, when given, the PostgreSQL-dependent tests run a second
// time on another server. Those tests are already in the suite, so the second run gets a line of its own
// and its passes are not added to the last line; anything that failed in it is. Besides failed tests,
// each of these counts as one failure, with a line saying what it was: a file that did not load, a hook
// that threw (its tests show as skipped), an unhandled error, an interrupted run, and a summary that was
// expected but not written (the run crashed, or never started). Exits 1 when anything failed.
import { existsSync, readFileSync } from 'node:fs';

/** The command line's `--suite` and `--again` files. */
function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i];
    if ((name !== '--suite' && name !== '--again') || !argv[i + 1]) {
      console.error('usage: node .ci/totals.mjs --suite <summary.json> [--again <summary.json>]');
      process.exit(2);
    }
    args[name.slice(2)] = argv[i + 1];
  }
  if (!args.suite) {
    console.error('usage: node .ci/totals.mjs --suite <summary.json> [--again <summary.json>]');
    process.exit(2);
  }
  return args;
}

/** One run's counts, printing a line for each failure that is not a failed test. */
function tally(file, label) {
  if (!existsSync(file)) {
    console.log(`${label}: no summary was written (the run crashed or never started): counted as 1 failed`);
    return { passed: 0, failed: 1, skipped: 0 };
  }
  let summary;
  try {
    summary = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    console.log(`${label}: the summary in ${file} is not JSON (${e.message}): counted as 1 failed`);
    return { passed: 0, failed: 1, skipped: 0 };
  }
  const { tests, failures = [], unhandledErrors = [], reason } = summary;
  for (const f of failures)
    console.log(`${label}: failed outside a test: ${f.file} (${f.kind}): ${f.message}`);
  for (const message of unhandledErrors) console.log(`${label}: unhandled error: ${message}`);
  const interrupted = reason === 'interrupted' ? 1 : 0;
  if (interrupted) console.log(`${label}: the run was interrupted before its end`);
  return {
    passed: tests.passed,
    failed: tests.failed + failures.length + unhandledErrors.length + interrupted,
    skipped: tests.skipped,
  };
}

/** The totals as the plain line. */
function line({ passed, failed, skipped }) {
  return `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
}

const args = parseArgs(process.argv.slice(2));
const suite = tally(args.suite, 'suite');
let failed = suite.failed;
if (args.again) {
  const again = tally(args.again, "again on the machine's PostgreSQL");
  console.log(`again on the machine's PostgreSQL: ${line(again)}`);
  failed += again.failed;
}
console.log(line({ ...suite, failed }));
process.exit(failed > 0 ? 1 : 0);
