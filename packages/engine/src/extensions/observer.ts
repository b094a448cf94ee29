import type { HistoryRecord } from '../store/records.js';

/**
 * One event of a run's history as committed (`seq` gap-free and increasing per run; `type` such as
 * `run.started`, `task.completed`), with its run's namespace and definition.
 */
export type ObservedEvent = HistoryRecord & {
  readonly namespace: string;
  readonly definition: string;
};

/**
 * Receives run and task history for a telemetry stack. Called only after the transaction that wrote the
 * events has committed, so nothing rolled back is ever reported; each call carries one transaction's
 * events, in `seq` order per run. Delivery is best effort and in-process: an event committed by a process
 * that crashes before the call is not reported (the run's history in the store is the record). Errors
 * thrown here are logged and otherwise ignored.
 */
export interface Observer {
  onEvents(events: readonly ObservedEvent[]): void | Promise<void>;
}
