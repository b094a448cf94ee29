export * from './client.js';
export * from './types.js';
