// `@weft/client/tasks`: the worker protocol alone. It loads Node's own HTTP and nothing of the full
// client (no undici), for worker processes that should stay small.
export { WeftApiError } from './api-error.js';
export type { ClientOptions } from './connection.js';
export { HttpJson } from './http-json.js';
export type { TaskLogHolder, TaskLogLevel, TaskLogWrite } from './task-logs-client.js';
export { type Leased, TaskProtocolClient } from './task-protocol.js';
export type { TlsFiles } from './tls.js';
export type { DispatchInfo, Json, LeasedTask, Report, ReportBase, ReportResult } from './types.js';
