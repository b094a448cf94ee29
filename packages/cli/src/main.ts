#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { CommanderError } from 'commander';
import { errorJson, exitCodeOf, messageOf } from './errors.js';
import { color, jsonOutput } from './output.js';
import { buildProgram } from './program.js';

const first = process.argv[2];
if (first === '--version' || first === '-V') {
  // Only as the first argument: `weft start NAME --version 3` pins a definition version.
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  console.log(pkg.version);
} else {
  try {
    await buildProgram().parseAsync();
  } catch (e) {
    process.exitCode = exitCodeOf(e);
    // Commander has printed its own message (or the help) already.
    if (!(e instanceof CommanderError)) report(e);
  }
}

/** One line on stderr (JSON with `--json`); never a stack trace for what a user can fix. */
function report(e: unknown): void {
  if (jsonOutput() || process.argv.includes('--json')) {
    console.error(JSON.stringify(errorJson(e)));
    return;
  }
  console.error(color.red(`error: ${messageOf(e)}`));
  if (process.env.WEFT_DEBUG) console.error(e);
}
