#!/usr/bin/env node
import { WeftApiError } from '@weft/client';
import { MissingPackageError } from '@weft/postgres';
import { CliError } from './errors.js';
import { color } from './output.js';
import { buildProgram } from './program.js';

try {
  await buildProgram().parseAsync();
} catch (e) {
  if (e instanceof CliError || e instanceof WeftApiError || e instanceof MissingPackageError) {
    console.error(color.red(`error: ${e.message}`));
    process.exitCode = e instanceof CliError ? e.exitCode : 1;
  } else {
    throw e;
  }
}
