import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildProgram, cliReference } from '../dist/index.js';

const PAGE = fileURLToPath(new URL('../../../docs/reference/cli.md', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/weft.js', import.meta.url));
const run = promisify(execFile);

/** The help block under `## <path>` on the page. */
function section(page: string, path: string): string {
  const start = page.indexOf(`## ${path}\n\n\`\`\`text\n`);
  if (start < 0) throw new Error(`docs/reference/cli.md has no section for ${path}`);
  const body = page.slice(page.indexOf('```text\n', start) + '```text\n'.length);
  return body.slice(0, body.indexOf('\n```'));
}

describe('docs/reference/cli.md', () => {
  it("is the commands' own help: regenerate it with npm run docs:cli when they change", () => {
    const page = readFileSync(PAGE, 'utf8');
    const expected = cliReference(buildProgram({}));
    // Name the commands whose help differs before comparing the whole page.
    const differing = [...expected.matchAll(/^## (.+)$/gm)]
      .map((m) => m[1]!)
      .filter((path) => !page.includes(`## ${path}\n`) || section(page, path) !== section(expected, path));
    expect(differing, 'commands whose help differs from the page (run npm run docs:cli)').toEqual([]);
    expect(page).toBe(expected);
  });

  it('matches what the weft command prints for --help', async () => {
    const page = readFileSync(PAGE, 'utf8');
    // A clean environment: no WEFT_URL, DATABASE_URL and the like to change the defaults shown.
    const env = { PATH: process.env.PATH ?? '', NO_COLOR: '1' };
    for (const args of [
      ['runs', 'list', '--help'],
      ['server', '--help'],
    ]) {
      const { stdout } = await run(process.execPath, [BIN, ...args], { env });
      const path = ['weft', ...args.slice(0, -1)].join(' ');
      expect(section(page, path), path).toBe(stdout.trimEnd());
    }
  });
});
