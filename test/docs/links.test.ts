import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { anchorsOf, brokenLinks, documentationFiles, githubSlug, linksOf } from './markdown.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('links in README.md and docs/', () => {
  it('every relative link and #anchor resolves', () => {
    const files = documentationFiles(ROOT);
    expect(files.length).toBeGreaterThan(10);
    const broken = brokenLinks(ROOT, files).map((b) => `${b.file}:${b.line}: (${b.target}) ${b.why}`);
    expect(broken, `broken links:\n${broken.join('\n')}`).toEqual([]);
  });
});

describe('the link checker', () => {
  const dir = mkdtempSync(join(tmpdir(), 'weft-links-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };

  it('makes anchors the way GitHub does', () => {
    expect(githubSlug('Nodes that reach outside the run')).toBe('nodes-that-reach-outside-the-run');
    expect(githubSlug('`weft signal RUN NAME`')).toBe('weft-signal-run-name');
    expect(githubSlug('POST /v1/runs/{id}/cancel')).toBe('post-v1runsidcancel');
    expect(githubSlug('Compensation (sagas)')).toBe('compensation-sagas');
    expect(githubSlug('3. A **finished** attempt stays finished')).toBe(
      '3-a-finished-attempt-stays-finished',
    );
    expect(githubSlug('`wait_for_event`: waits')).toBe('wait_for_event-waits');
    const anchors = anchorsOf('# Top\n## Same\n## Same\n```\n## Not a heading\n```\n<a id="kept"></a>\n');
    expect([...anchors]).toEqual(['top', 'same', 'same-1', 'kept']);
  });

  it('ignores links inside code', () => {
    const links = linksOf('see [a](a.md)\n`[b](b.md)`\n```\n[c](c.md)\n```\n[d]: d.md\n');
    expect(links).toEqual([
      { line: 1, target: 'a.md' },
      { line: 6, target: 'd.md' },
    ]);
  });

  it('names each broken link: a missing file, a missing anchor, one outside the repository', () => {
    write('README.md', '# Top\n[ok](docs/a.md#real)\n[gone](docs/none.md)\n[self](#top)\n');
    write(
      'docs/a.md',
      '# A\n## Real\n[bad anchor](../README.md#nowhere)\n[up](../../x.md)\n[web](https://example.com)\n[self](#missing)\n[code](b.ts#L3)\n[code anchor](b.ts#x)\n',
    );
    write('docs/b.ts', 'export {};\n');
    const broken = brokenLinks(dir, documentationFiles(dir));
    expect(broken.map((b) => `${b.file}:${b.line} ${b.target}`)).toEqual([
      'README.md:3 docs/none.md',
      'docs/a.md:3 ../README.md#nowhere',
      'docs/a.md:4 ../../x.md',
      'docs/a.md:6 #missing',
      'docs/a.md:8 b.ts#x',
    ]);
    expect(broken[1]!.why).toBe('README.md has no heading with the anchor #nowhere');
  });
});
