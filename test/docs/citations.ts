import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { blankCode } from './markdown.js';

/** A test declared in the repository: its title as written (templates kept), and its file. */
export interface DeclaredTest {
  readonly title: string;
  readonly file: string;
  readonly kind: 'describe' | 'test';
  /** Offset of the declaration in its file, to tell a `describe` that comes before an `it`. */
  readonly at: number;
}

/** A citation that does not resolve. */
export interface BadCitation {
  readonly file: string;
  readonly line: number;
  readonly cited: string;
  readonly why: string;
}

const DECLARATION =
  /\b(describe|it|test)((?:\.(?:each|skipIf|runIf|only|skip|todo|concurrent|sequential)(?:\([^)]*\))?)*)\(\s*(['"`])((?:\\.|(?!\3)[^\\])*)\3/g;

/** Every `describe`, `it` and `test` title declared in a file's text. */
export function declaredTests(text: string, file: string): DeclaredTest[] {
  return [...text.matchAll(DECLARATION)].map((m) => ({
    title: m[4]!.replace(/\\(.)/g, '$1'),
    file,
    kind: m[1] === 'describe' ? 'describe' : 'test',
    at: m.index,
  }));
}

/** A declared title as a pattern: `${...}` and vitest's `%s`-style placeholders match any text. */
function titlePattern(title: string): RegExp {
  const escaped = title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const wild = escaped.replace(/\\\$\\\{.*?\\\}/g, '.+').replace(/%[sdifjo#%]/g, '.+');
  return new RegExp(`^${wild}$`);
}

/**
 * Whether `cited` names a declared test: its title exactly (a template's placeholders match anything),
 * or `describe title > test title` for a test declared after that `describe` in the same file.
 */
export function findTest(
  cited: string,
  tests: readonly DeclaredTest[],
  inFiles?: ReadonlySet<string>,
): boolean {
  const pool = inFiles ? tests.filter((t) => inFiles.has(t.file)) : tests;
  const matches = (t: DeclaredTest, text: string) => titlePattern(t.title).test(text);
  if (pool.some((t) => matches(t, cited))) return true;
  const parts = cited.split(' > ');
  if (parts.length < 2) return false;
  const inner = parts.at(-1)!;
  return pool.some(
    (t) =>
      matches(t, inner) &&
      parts
        .slice(0, -1)
        .every((outer) =>
          pool.some((d) => d.kind === 'describe' && d.file === t.file && d.at < t.at && matches(d, outer)),
        ),
  );
}

/**
 * A file's text with comment markers taken off each line and the lines joined by one space, so a citation
 * wrapped over several comment lines reads as one; `lineAt` gives the original line of an offset.
 */
function flatten(text: string): { flat: string; lineAt: (offset: number) => number } {
  const starts: number[] = [];
  let flat = '';
  for (const line of text.split('\n')) {
    starts.push(flat.length);
    flat += `${line.replace(/^\s*(\/\/+|\/?\*+\/?|--|#+)?\s*/, '')} `;
  }
  const lineAt = (offset: number) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  return { flat, lineAt };
}

/** Test titles cited in a text: quoted after `test` or `tests` (`test "..."`, `tests: "...", "..."`). */
export function citedTitles(text: string): { title: string; line: number }[] {
  const { flat, lineAt } = flatten(text);
  const out: { title: string; line: number }[] = [];
  for (const m of flat.matchAll(/\btests?\b:?\s*\(?\s*((?:"[^"]+"\s*(?:,|\band\b|\bor\b)?\s*)+)/gi)) {
    for (const q of m[1]!.matchAll(/"([^"]+)"/g)) {
      out.push({
        title: q[1]!.replace(/\s+/g, ' ').trim(),
        line: lineAt(m.index + q.index! + m[0].indexOf(m[1]!)),
      });
    }
  }
  return out;
}

/** Invariant numbers cited in a text: `invariant 4`, `invariants 1 and 2`, `invariants 1-3`, `invariants 2, 3 and 20`. */
export function citedInvariants(text: string): { number: number; line: number }[] {
  const { flat, lineAt } = flatten(text);
  const out: { number: number; line: number }[] = [];
  for (const m of flat.matchAll(/\binvariants?\s+\[?(\d+(?:\s*(?:,|\band\b|\bor\b|\bto\b|-|–)\s*\d+)*)/gi)) {
    const line = lineAt(m.index);
    const list = m[1]!;
    for (const range of list.matchAll(/(\d+)\s*(?:(?:-|–|\bto\b)\s*(\d+))?/g)) {
      const from = Number(range[1]);
      const to = range[2] === undefined ? from : Number(range[2]);
      for (let n = from; n <= to; n++) out.push({ number: n, line });
    }
  }
  return out;
}

/** The numbers of the invariants page (`### 4. ...`). */
export function invariantNumbers(page: string): Set<number> {
  return new Set([...page.matchAll(/^### (\d+)\. /gm)].map((m) => Number(m[1])));
}

/** Relative links to TypeScript files on one line of Markdown, resolved from the page's folder. */
function linkedTestFiles(root: string, file: string, line: string): Set<string> {
  const out = new Set<string>();
  for (const m of line.matchAll(/\]\(([^)#\s]+\.(?:ts|mjs|js))\)/g)) {
    out.add(resolve(dirname(join(root, file)), m[1]!).slice(resolve(root).length + 1));
  }
  return out;
}

/**
 * Checks every citation in `files` (paths relative to `root`): each invariant number must be on the
 * invariants page, and each cited test title must be declared by some test; on a Markdown line that links
 * to test files, by a test of one of those files. Code in Markdown is not read.
 */
export function badCitations(
  root: string,
  files: readonly string[],
  tests: readonly DeclaredTest[],
  invariants: ReadonlySet<number>,
): BadCitation[] {
  const bad: BadCitation[] = [];
  for (const file of files) {
    // In Markdown, code (a sample such as `(invariant 4; test "...")`) cites nothing.
    const raw = readFileSync(join(root, file), 'utf8');
    const text = file.endsWith('.md') ? blankCode(raw) : raw;
    const lines = raw.split('\n');
    for (const c of citedInvariants(text)) {
      if (!invariants.has(c.number))
        bad.push({ file, line: c.line, cited: `invariant ${c.number}`, why: 'there is no such invariant' });
    }
    for (const c of citedTitles(text)) {
      const linked = file.endsWith('.md')
        ? linkedTestFiles(root, file, lines[c.line - 1] ?? '')
        : new Set<string>();
      const scope = linked.size > 0 ? linked : undefined;
      if (!findTest(c.title, tests, scope))
        bad.push({
          file,
          line: c.line,
          cited: `test "${c.title}"`,
          why: scope ? `no test of ${[...scope].join(', ')} has this title` : 'no test has this title',
        });
    }
  }
  return bad;
}
