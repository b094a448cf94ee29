// Puts the PostgreSQL driver, as this repository patches it, inside @weft/postgres's tarball.
//
// The driver (`postgres`) has fixes Weft needs to ride out a database restart that no release carries yet
// (decision 0129). `npm ci` applies them to this repository's install with patch-package, which an
// application installing @weft/postgres never runs. So the package lists the driver in
// `bundleDependencies`, and packing copies the patched driver into the package's own node_modules (npm packs
// a bundled dependency only from there; the workspace install keeps it at the root). Decision 0189.
//
//   node scripts/bundle-driver.mjs copy     (prepack) checks the patch is applied, then copies
//   node scripts/bundle-driver.mjs remove   (postpack) removes the copy

import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const repoDir = join(pkgDir, '..', '..');
const rootCopy = join(repoDir, 'node_modules', 'postgres');
const bundledDir = join(pkgDir, 'node_modules');
const bundledCopy = join(bundledDir, 'postgres');

function fail(message) {
  console.error(`bundle-driver: ${message}`);
  process.exit(1);
}

/** Every line the patch adds, by the file (inside the driver's folder) it adds it to. */
function addedLines(patchText) {
  const byFile = new Map();
  let file = null;
  for (const line of patchText.split('\n')) {
    const target = /^\+\+\+ b\/node_modules\/postgres\/(.+)$/.exec(line);
    if (target) {
      file = target[1];
      byFile.set(file, []);
    } else if (file && line.startsWith('+') && line.slice(1).trim() !== '') {
      byFile.get(file).push(line.slice(1));
    }
  }
  return byFile;
}

function copy() {
  const pinned = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).dependencies.postgres;
  if (!existsSync(rootCopy)) fail(`no driver at ${rootCopy}: run npm ci at the repository root first`);
  const installed = JSON.parse(readFileSync(join(rootCopy, 'package.json'), 'utf8')).version;
  if (installed !== pinned)
    fail(`the installed driver is postgres ${installed}, the package pins ${pinned}: run npm ci`);
  const patchFile = join(repoDir, 'patches', `postgres+${pinned}.patch`);
  if (!existsSync(patchFile))
    fail(`no patch for postgres ${pinned} at ${patchFile}: write one, or drop the bundling`);
  for (const [file, lines] of addedLines(readFileSync(patchFile, 'utf8'))) {
    const text = readFileSync(join(rootCopy, file), 'utf8');
    const missing = lines.find((l) => !text.includes(l));
    if (missing !== undefined) {
      fail(
        `the driver's ${file} lacks the patch's line "${missing.trim()}": run npm ci (its postinstall applies the patch)`,
      );
    }
  }
  // Node resolves `postgres` from this folder first while the copy is there (tests of the repository may
  // load Weft meanwhile): it appears and goes whole, by renaming, never half-written or half-removed.
  remove();
  const staging = join(bundledDir, `.postgres-${process.pid}`);
  cpSync(rootCopy, staging, { recursive: true });
  renameSync(staging, bundledCopy);
}

function remove() {
  if (existsSync(bundledCopy)) {
    const leaving = join(bundledDir, `.postgres-removed-${process.pid}`);
    renameSync(bundledCopy, leaving);
    rmSync(leaving, { recursive: true, force: true });
  }
  if (existsSync(bundledDir) && readdirSync(bundledDir).length === 0) rmdirSync(bundledDir);
}

const command = process.argv[2];
if (command === 'copy') copy();
else if (command === 'remove') remove();
else fail(`unknown command ${command ?? '(none)'}: use copy or remove`);
