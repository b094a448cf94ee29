export * from './app.js';
export * from './openapi.js';
export * from './serve.js';
export * from './wire.js';
