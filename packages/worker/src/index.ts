export type { Json, LeasedTask } from '@weft/client/tasks';
export { DEFAULT_CONNECT_TIMEOUT_MS } from './connect.js';
export * from './errors.js';
export type { WorkerLogger } from './problems.js';
export type { TaskLogger } from './task-log.js';
export * from './worker.js';
