// The public API of @weft/engine: the engine, its settings and its services with what they take and give;
// the Store contract, the records it speaks and the helpers every store shares; dispatch; the extension
// points (gate, hooks, observer, tracer, cascader); outbox destinations; blob stores. What Weft's own
// packages share beyond this is in internal.ts (`@weft/engine/internal`).

export type { BackgroundLoopStatus } from './background/background-loop.js';
export type { Redispatcher } from './background/redispatch.js';
export type { Sweeper, SweeperStats } from './background/sweeper.js';
export { type Cascader, noCascade, type StoppedRun } from './decisions/cascade.js';
export {
  type Dispatcher,
  type NamedTask,
  type QueueDispatcher,
  type RowDispatcher,
  tableDispatcher,
} from './dispatch/dispatcher.js';
export { Engine } from './engine.js';
export type { EngineOptions } from './engine-options.js';
export * from './extensions/gate.js';
export * from './extensions/hooks.js';
export * from './extensions/observer.js';
export * from './extensions/tracer.js';
export {
  OUTBOUND_ALLOW_SETTING,
  type OutboundPolicy,
  OutboundRefused,
  outboundPolicy,
  parseOutboundAllow,
} from './outbound/address-policy.js';
export { createOutbound, type Outbound } from './outbound/outbound.js';
export { childRunCascader } from './outbox/child-cascade.js';
export { type DeliveryContext, type Destination, failureOf } from './outbox/destination.js';
export { outboxDispatcher } from './outbox/outbox-dispatcher.js';
export * from './outbox/webhook.js';
export type { BlobStore } from './payloads/blob-store.js';
export { FolderBlobStore } from './payloads/folder-blob-store.js';
export { REDACTED } from './secrets/placeholders.js';
export { type SealedSecret, SecretBox, type SecretKeys } from './secrets/secret-box.js';
export { MAX_SECRET_BYTES, SecretService } from './secrets/secret-service.js';
export {
  MemorySecretStore,
  type SecretInfo,
  type SecretKey,
  type SecretStore,
  type StoredSecret,
} from './secrets/secret-store.js';
export type { BlobDeleter } from './services/blob-deleter.js';
export {
  type BulkFilter,
  type BulkProgress,
  type BulkRefusal,
  type BulkRequest,
  type BulkResult,
  bulkOperatorAction,
} from './services/bulk-actions.js';
export type { DefinitionService } from './services/definitions.js';
export type {
  EmitFailure,
  EmitOutcome,
  EmitRequest,
  EmittedRun,
  EventService,
} from './services/events.js';
export type { ForkRequest, ForkService } from './services/forks.js';
export type { HumanTaskService } from './services/human-tasks.js';
export type { LimitService } from './services/limit-service.js';
export type { Asker, OperatorActionService } from './services/operator-actions.js';
export {
  archiveKey,
  PURGE_COUNT_CAP,
  type PurgeRequest,
  type RetentionRequest,
  type RetentionService,
} from './services/retention.js';
export {
  MAX_MOVE_RUNS,
  type MoveOutcome,
  type MovePlan,
  type MoveSelection,
  type MoveTarget,
  type MoveVerdict,
  type RunMoveService,
} from './services/run-moves.js';
export type { RunService } from './services/runs.js';
export type { ScheduleRequest, ScheduleService } from './services/schedules.js';
export {
  MAX_SIGNAL_BYTES,
  type SignalOutcome,
  type SignalRequest,
  type SignalService,
} from './services/signals.js';
export type { StartOutcome } from './services/starts.js';
export type { LeaseTerms, PollRequest, ReportRequest } from './services/tasks/task-requests.js';
export type { TaskService } from './services/tasks/tasks.js';
export * from './store/blob-deletion-records.js';
export * from './store/capabilities.js';
export * from './store/fork-records.js';
export * from './store/human-records.js';
export * from './store/lease-rounds.js';
export * from './store/limit-records.js';
export * from './store/move-records.js';
export { ANY_NAMESPACE } from './store/namespaces.js';
export * from './store/operator-records.js';
export * from './store/outbox-records.js';
export * from './store/records.js';
export * from './store/repair-records.js';
export * from './store/report-refusals.js';
export * from './store/retention-records.js';
export * from './store/run-filter.js';
export * from './store/run-progress.js';
export * from './store/schedule-records.js';
export * from './store/store.js';
export * from './store/workload-records.js';
export * from './store/write-set.js';
export { type Clock, systemClock } from './support/clock.js';
export { DEFAULT_CONFIG, type EngineConfig } from './support/config.js';
export { type Logger, silentLogger } from './support/logger.js';
export { type Fitted, type FittedLine, fitLines, truncationMarker } from './task-logs/fit-lines.js';
export {
  MAX_LINES_PER_WRITE,
  MAX_LOG_PAGE,
  TaskLogService,
  UnavailableTaskLogStore,
} from './task-logs/task-log-service.js';
export * from './task-logs/task-log-store.js';
export { contextOfTraceparent, formatTraceparent, parseTraceparent } from './tracing/traceparent.js';
export { runAttributes, TRACER_NAME, WeftAttr, weftTracer } from './tracing/weft-tracer.js';
export * from './workers/deliver.js';
