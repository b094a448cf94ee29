import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  badCitations,
  citedInvariants,
  citedTitles,
  type DeclaredTest,
  declaredTests,
  findTest,
  invariantNumbers,
} from './citations.js';
import { filesUnder } from './files.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every test the repository declares: the packages' tests, the conformance suites, the examples' tests. */
function repositoryTests(): DeclaredTest[] {
  const files = [
    ...filesUnder(ROOT, 'packages', /\.(ts|mjs)$/),
    ...filesUnder(ROOT, 'examples', /\.test\.ts$/),
    ...filesUnder(ROOT, 'test', /\.test\.ts$/),
  ];
  return files.flatMap((f) => declaredTests(readFileSync(join(ROOT, f), 'utf8'), f));
}

/** Where citations are written: code, SQL, the examples and the docs (this checker's own folder aside). */
function citingFiles(): string[] {
  return [
    'README.md',
    ...filesUnder(ROOT, 'docs', /\.md$/),
    ...filesUnder(ROOT, 'packages', /\.(ts|mjs|js|sql)$/),
    ...filesUnder(ROOT, 'examples', /\.(ts|mjs|yaml)$/),
    ...filesUnder(ROOT, 'test', /\.ts$/).filter((f) => !f.startsWith(join('test', 'docs'))),
  ];
}

describe('citations of invariants and tests', () => {
  it('every cited invariant exists and every cited test title is a test', () => {
    const invariants = invariantNumbers(readFileSync(join(ROOT, 'docs/internals/invariants.md'), 'utf8'));
    expect(invariants.size).toBeGreaterThan(20);
    const tests = repositoryTests();
    const bad = badCitations(ROOT, citingFiles(), tests, invariants).map(
      (b) => `${b.file}:${b.line}: ${b.cited}: ${b.why}`,
    );
    expect(bad, `citations that do not resolve:\n${bad.join('\n')}`).toEqual([]);
  });

  it('the invariants page names tests for every rule, and every number is in order', () => {
    const page = readFileSync(join(ROOT, 'docs/internals/invariants.md'), 'utf8');
    const numbers = [...invariantNumbers(page)];
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    const sections = page.split(/^### /m).slice(1);
    for (const section of sections.filter((s) => /^\d+\. /.test(s))) {
      expect(
        citedTitles(section).length,
        `invariant ${section.slice(0, 40)}... names no test`,
      ).toBeGreaterThan(0);
    }
  });
});

describe('the citation checker', () => {
  const tests = [
    ...declaredTests(
      "describe('decide queue', () => {\n  it('a claim waits for a request', async () => {});\n});\n" +
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text of a test declared with a template
        'it(`round ${round}: ${RUNS} runs all finish`, () => {});\n' +
        "describe.each(STORES)('engine on the %s store', () => {});\n" +
        "it('the holder\\'s report wins', () => {});\n",
      'a.test.ts',
    ),
    ...declaredTests("it('something else', () => {});\n", 'b.test.ts'),
  ];

  it('reads titles as vitest names them', () => {
    expect(tests.map((t) => `${t.kind}:${t.title}`)).toEqual([
      'describe:decide queue',
      'test:a claim waits for a request',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the title as declared, placeholders and all
      'test:round ${round}: ${RUNS} runs all finish',
      'describe:engine on the %s store',
      "test:the holder's report wins",
      'test:something else',
    ]);
    expect(findTest('a claim waits for a request', tests)).toBe(true);
    expect(findTest('decide queue > a claim waits for a request', tests)).toBe(true);
    expect(findTest('round 2: 40 runs all finish', tests)).toBe(true);
    expect(findTest('engine on the memory store', tests)).toBe(true);
    expect(findTest("the holder's report wins", tests)).toBe(true);
    expect(findTest('a claim waits', tests)).toBe(false);
    expect(findTest('something else > a claim waits for a request', tests)).toBe(false);
    expect(findTest('something else', tests, new Set(['a.test.ts']))).toBe(false);
  });

  it('finds citations however they are wrapped', () => {
    const code =
      '// Claims first (invariants 1 and 2; test: "decide\n// queue"), then\n' +
      ' * reads (invariant 7; tests "a", "b" and "c"); see invariants 3-5 and invariant 26.\n';
    expect(citedTitles(code)).toEqual([
      { title: 'decide queue', line: 1 },
      { title: 'a', line: 3 },
      { title: 'b', line: 3 },
      { title: 'c', line: 3 },
    ]);
    expect(citedInvariants(code).map((c) => c.number)).toEqual([1, 2, 7, 3, 4, 5, 26]);
  });
});
