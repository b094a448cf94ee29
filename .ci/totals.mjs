// Reads vitest's output and prints its test totals as one plain line.
import { readFileSync } from 'node:fs';

const text = readFileSync(process.argv[2], 'utf8').replace(
  new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'),
  '',
);
// Every run of the runner prints its totals (the whole suite, then the PostgreSQL-dependent tests on a
// second server, when there is one); they are added up.
const lines = text.split('\n').filter((l) => /^\s*Tests\s+/.test(l));
if (lines.length === 0) {
  console.log(
    '0 passed, 1 failed (the test runner printed no totals: it did not get as far as running tests)',
  );
  process.exit(0);
}
const count = (word) =>
  lines.reduce((sum, line) => sum + Number(new RegExp(`(\\d+) ${word}`).exec(line)?.[1] ?? 0), 0);
const skipped = count('skipped') + count('todo');
console.log(`${count('passed')} passed, ${count('failed')} failed${skipped ? `, ${skipped} skipped` : ''}`);
