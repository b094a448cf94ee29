export * from './client.js';
export * from './sse.js';
export * from './types.js';
