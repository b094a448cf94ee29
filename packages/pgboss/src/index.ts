export * from './joined-db.js';
export * from './pgboss-consumer.js';
export * from './pgboss-dispatcher.js';
export * from './queue-names.js';
