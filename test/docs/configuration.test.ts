import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { filesUnder } from './files.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Source files of the packages (their `src`) and of the examples. */
function sources(): string[] {
  const code = /\.(ts|mjs|js)$/;
  return [
    ...readdirSync(join(ROOT, 'packages')).flatMap((pkg) =>
      filesUnder(ROOT, join('packages', pkg, 'src'), code),
    ),
    ...filesUnder(ROOT, 'examples', code),
  ].filter((f) => !f.endsWith('.d.ts'));
}

/** Environment variables a file reads: `process.env.NAME`, `env.NAME`, `process.env['NAME']`. */
function environmentVariables(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b/g)) names.add(m[1]!);
  for (const m of text.matchAll(/\benv\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\]/g)) names.add(m[1]!);
  return [...names];
}

describe('docs/reference/configuration.md', () => {
  it('lists every environment variable Weft reads', () => {
    const page = readFileSync(join(ROOT, 'docs/reference/configuration.md'), 'utf8');
    const missing: string[] = [];
    let found = 0;
    for (const file of sources()) {
      for (const name of environmentVariables(readFileSync(join(ROOT, file), 'utf8'))) {
        found++;
        if (!page.includes(`\`${name}\``)) missing.push(`${name} (read in ${file})`);
      }
    }
    expect(found).toBeGreaterThan(20);
    expect(missing, 'environment variables read in code and missing from the page').toEqual([]);
  });

  it('finds the variables however the code reads them', () => {
    expect(
      environmentVariables("process.env.WEFT_URL ?? env.WEFT_S3_BUCKET; process.env['REDIS_URL']; env.lower"),
    ).toEqual(['WEFT_URL', 'WEFT_S3_BUCKET', 'REDIS_URL']);
  });
});
