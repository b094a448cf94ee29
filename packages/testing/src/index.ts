export * from './database.js';
export { withDatabase } from './global-setup.js';
export * from './keys.js';
export * from './list-dispatcher.js';
export * from './services.js';
