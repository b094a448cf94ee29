/**
 * What the engine measures as it goes, for a metrics library to count (the server feeds Prometheus). Every
 * call carries only what the engine already holds in memory at that point: no measurement reads or writes
 * the store. Calls are synchronous and must not throw; the default meter does nothing.
 */
export interface EngineMeter {
  /** A run started (its first decision committed). */
  runStarted(namespace: string, definition: string): void;
  /** A run finished with `status` (completed, failed, cancelled, terminated) after `seconds` since it started. */
  runFinished(namespace: string, definition: string, status: string, seconds: number): void;
  /** A worker's report of a task was accepted: `status` is completed or failed, `seconds` since its lease. */
  taskFinished(taskType: string, status: string, seconds: number): void;
  /**
   * A task was leased: `queueWaitSeconds` since it became due on the queue; `stepSeconds`, for a first
   * attempt, since the transaction that created it (the end of the task whose report decided it).
   */
  taskLeased(taskType: string, queueWaitSeconds: number, stepSeconds: number | null): void;
  /** A transaction that decided runs committed after `seconds`; `changed` is false when it wrote nothing. */
  decisionPass(seconds: number, changed: boolean): void;
}

/** A meter that measures nothing: the engine's default. */
export const silentMeter: EngineMeter = {
  runStarted() {},
  runFinished() {},
  taskFinished() {},
  taskLeased() {},
  decisionPass() {},
};
