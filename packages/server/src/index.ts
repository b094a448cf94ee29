export * from './app.js';
export * from './serve.js';
export * from './wire.js';
