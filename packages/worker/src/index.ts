export type { Json, LeasedTask } from '@weft/client';
export * from './errors.js';
export * from './worker.js';
