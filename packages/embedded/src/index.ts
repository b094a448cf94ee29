export * from './create-engine.js';
export * from './executor.js';
export * from './handlers.js';
export * from './manual-clock.js';
export * from './run-result.js';
export * from './test-engine.js';
