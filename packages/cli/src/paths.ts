import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A path inside the Weft repository (examples ship next to the packages). */
export function repoPath(relative: string): string {
  const path = fileURLToPath(new URL(`../../../${relative}`, import.meta.url));
  if (!existsSync(path)) throw new Error(`${relative} is missing from this installation (looked at ${path})`);
  return path;
}
