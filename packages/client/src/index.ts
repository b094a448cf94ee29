export * from './api-client.js';
export * from './client.js';
export * from './flow-types.js';
export * from './operator-types.js';
export * from './run-errors.js';
export * from './secrets-client.js';
export * from './sse.js';
export * from './types.js';
export type { WaitOptions } from './waiting.js';
