export { buildProgram } from './program.js';
export { cliReference, helpOf } from './reference.js';
