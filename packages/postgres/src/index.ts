export * from './api-keys.js';
export * from './connect.js';
export * from './db.js';
export * from './embedded.js';
export * from './migrate.js';
export * from './migration-files.js';
export {
  type AppliedMigration,
  type ChangedMigration,
  readLedger,
} from './migration-ledger.js';
export * from './missing-package.js';
export * from './pg-retention.js';
export * from './pg-secret-store.js';
export * from './pg-store.js';
export * from './pg-task-log-store.js';
