export * from './app.js';
export * from './openapi.js';
export { type RouteInfo, routesOf } from './route-table.js';
export * from './serve.js';
export * from './wire.js';
