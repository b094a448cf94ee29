import type { Action } from '@weft/core';
import type { Extensions } from '../extensions/extensions.js';
import type { FinishedRun } from '../extensions/hooks.js';
import type { ObservedEvent } from '../extensions/observer.js';
import type { LockedRun } from '../store/records.js';
import type { HistoryRow } from '../store/write-set.js';
import { type EngineMeter, silentMeter } from '../support/meter.js';

/** A run start or end the pass measures after commit. */
interface Measured {
  readonly namespace: string;
  readonly definition: string;
  /** Absent for a start. */
  readonly status?: string;
  readonly seconds?: number;
}

/**
 * What one pass will report after commit: its history events (with the transaction's time, the run's
 * namespace and definition) and the runs it finished, collected only when an extension listens; and the
 * runs it started and finished, for the meter, taken from the actions the pass writes anyway.
 */
export class PassReport {
  private readonly events: ObservedEvent[] = [];
  private readonly finished: FinishedRun[] = [];
  private readonly measured: Measured[] = [];

  constructor(
    private readonly extensions: Extensions | null,
    private readonly meter: EngineMeter = silentMeter,
  ) {}

  /** A history row the pass writes for a run. */
  event(run: LockedRun, row: HistoryRow): void {
    if (row.type === 'run.started' && this.meter !== silentMeter)
      this.measured.push({ namespace: run.namespace, definition: run.definitionName });
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
    if (this.meter !== silentMeter)
      this.measured.push({
        namespace: run.namespace,
        definition: run.definitionName,
        status: action.status,
        seconds: Math.max(0, (run.now.getTime() - run.createdAt.getTime()) / 1000),
      });
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

  /** After commit: counts starts and ends, and hands everything to the observer, the tracer and `onRunFinished`. */
  async committed(): Promise<void> {
    for (const m of this.measured)
      if (m.status === undefined) this.meter.runStarted(m.namespace, m.definition);
      else this.meter.runFinished(m.namespace, m.definition, m.status, m.seconds ?? 0);
    if (this.extensions && (this.events.length > 0 || this.finished.length > 0))
      await this.extensions.committed({ events: this.events, finished: this.finished });
  }
}
