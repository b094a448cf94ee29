import type { Action } from '@weft/core';
import type { Extensions } from '../extensions/extensions.js';
import type { FinishedRun } from '../extensions/hooks.js';
import type { ObservedEvent } from '../extensions/observer.js';
import type { HistoryRow, LockedRun } from '../store/records.js';

/**
 * What one pass will report after commit: its history events (with the transaction's time, the run's
 * namespace and definition) and the runs it finished. Collected only when an extension listens.
 */
export class PassReport {
  private readonly events: ObservedEvent[] = [];
  private readonly finished: FinishedRun[] = [];

  constructor(private readonly extensions: Extensions | null) {}

  /** A history row the pass writes for a run. */
  event(run: LockedRun, row: HistoryRow): void {
    if (!this.extensions?.listening) return;
    const { runId, seq, type, nodeId, iteration, attempt, data } = row;
    this.events.push({
      runId,
      seq,
      type,
      nodeId,
      iteration,
      attempt,
      data,
      at: run.now,
      namespace: run.namespace,
      definition: run.definitionName,
    });
  }

  /** A run the pass finishes. */
  finish(run: LockedRun, action: Extract<Action, { kind: 'finish_run' }>): void {
    if (!this.extensions?.listening) return;
    this.finished.push({
      runId: run.id,
      namespace: run.namespace,
      definition: run.definitionName,
      status: action.status,
      output: action.output ?? null,
      error: action.error ?? null,
    });
  }

  /** After commit: hands everything to the observer, the tracer and `onRunFinished`. */
  async committed(): Promise<void> {
    if (this.extensions && (this.events.length > 0 || this.finished.length > 0))
      await this.extensions.committed({ events: this.events, finished: this.finished });
  }
}
