export * from './database.js';
export { withDatabase } from './global-setup.js';
export * from './services.js';
