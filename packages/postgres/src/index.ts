export * from './api-keys.js';
export * from './connect.js';
export * from './db.js';
export * from './embedded.js';
export * from './migrate.js';
export * from './missing-package.js';
export * from './pg-secret-store.js';
export * from './pg-store.js';
