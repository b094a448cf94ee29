import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Files under `dir` (relative to `root`) whose names match, sorted, skipping node_modules and dist. */
export function filesUnder(root: string, dir: string, match: RegExp): string[] {
  if (!existsSync(join(root, dir))) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(join(root, d), { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(path);
      } else if (match.test(entry.name)) out.push(path);
    }
  };
  walk(dir);
  return out.sort();
}
