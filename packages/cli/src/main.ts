#!/usr/bin/env node
import { WeftApiError } from '@weft/client';
import { CliError } from './errors.js';
import { color } from './output.js';
import { buildProgram } from './program.js';

try {
  await buildProgram().parseAsync();
} catch (e) {
  // A missing optional package (@weft/postgres's MissingPackageError, matched by name so that the store is
  // not loaded for every command) says what to install.
  const missing = e instanceof Error && e.name === 'MissingPackageError';
  if (e instanceof CliError || e instanceof WeftApiError || missing) {
    console.error(color.red(`error: ${e.message}`));
    process.exitCode = e instanceof CliError ? e.exitCode : 1;
  } else {
    // Never a stack trace for what a user can fix; WEFT_DEBUG=1 shows it for what they cannot.
    console.error(color.red(`error: ${String((e as Error)?.message ?? e).split('\n')[0]}`));
    if (process.env.WEFT_DEBUG) console.error(e);
    process.exitCode = 1;
  }
}
