// Writes docs/reference/cli.md from the commands' own help (`npm run docs:cli`). Environment defaults are
// left out (the program sees no environment), so the page is the same on every machine.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildProgram } from './program.js';
import { cliReference } from './reference.js';

const target = fileURLToPath(new URL('../../../docs/reference/cli.md', import.meta.url));
writeFileSync(target, cliReference(buildProgram({})));
console.log(`wrote ${target}`);
