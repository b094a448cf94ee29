export * from './app.js';
export { type AuthSettings, type RouteRule, routeRules } from './auth/authenticate.js';
export { ensureBootstrapKey, type IssuedKey, issueKey, type KeyRequest } from './auth/issue.js';
export { generateKey, keyPrefix } from './auth/key-format.js';
export { parseRateLimit, type RateLimit } from './auth/rate-limit.js';
export { AUTH_RULES, type AuthRule, type Principal } from './auth/rules.js';
export {
  BACKGROUND_STALL_MS,
  type DatabaseCheck,
  type DatabaseProbe,
  READY_TIMEOUT_MS,
} from './health.js';
export type { LogFormat } from './logger.js';
export { LABEL_LIMITS, LabelFold, type LabelFolds, labelFolds, OTHER_LABEL } from './metrics/label-fold.js';
export { PromMeter } from './metrics/prom-meter.js';
export { WORKLOAD_CACHE_MS, WorkloadCache } from './metrics/workload-gauges.js';
export * from './openapi.js';
export { REQUEST_ID_HEADER, requestIdMixin } from './request-log.js';
export { type RouteInfo, routesOf } from './route-table.js';
export { keyJson } from './routes/keys.js';
export * from './serve.js';
export * from './tls.js';
export * from './tracing-sdk.js';
export * from './wire.js';
