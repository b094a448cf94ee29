export * from './amqp-sink.js';
export * from './build.js';
export * from './config.js';
export * from './message.js';
export * from './nats-sink.js';
export * from './redis-sink.js';
export * from './redis-tasks.js';
export * from './s3-blob-store.js';
