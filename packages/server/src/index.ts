export * from './app.js';
export { type DatabaseCheck, type DatabaseProbe, READY_TIMEOUT_MS } from './health.js';
export * from './openapi.js';
export { type RouteInfo, routesOf } from './route-table.js';
export * from './serve.js';
export * from './tls.js';
export * from './wire.js';
