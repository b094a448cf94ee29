import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The core is pure: no database, clock, randomness or network. Its sources may import only libraries
// that compute (validation, expressions, YAML, hashing), and never read the time or a random number:
// `now` is handed to the decider by the shell.

const src = new URL('../src/', import.meta.url).pathname;
const ALLOWED = new Set(['ajv', 'ajv-formats', 'jsonata', 'yaml', 'node:crypto']);
const IMPURE = [
  /\bDate\.now\s*\(/,
  /\bnew Date\(\s*\)/,
  /\bMath\.random\s*\(/,
  /\bset(Timeout|Interval|Immediate)\s*\(/,
  /\bprocess\./,
  /\bfetch\s*\(/,
  /\brandomUUID\b|\brandomBytes\b/,
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('the core stays pure', () => {
  it('imports only computing libraries, and reads no clock, randomness, process or network', () => {
    const problems: string[] = [];
    for (const file of sources(src)) {
      const text = readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/\/\/.*$/gm, '');
      for (const m of text.matchAll(/\bfrom\s+'([^']+)'|\bimport\s*\(\s*'([^']+)'/g)) {
        const spec = m[1] ?? m[2]!;
        if (!spec.startsWith('.') && !ALLOWED.has(spec)) problems.push(`${file}: imports ${spec}`);
      }
      for (const pattern of IMPURE) if (pattern.test(text)) problems.push(`${file}: uses ${pattern}`);
    }
    expect(problems).toEqual([]);
  });
});
