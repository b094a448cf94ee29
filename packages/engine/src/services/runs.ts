import { type RunEvent, WeftError } from '@weft/core';
import type { LockedRun, RunRecord, StartRequest } from '../store/records.js';
import type { StoreTx } from '../store/store.js';
import { Batcher } from '../support/batcher.js';
import { notFound, type OperatorActionService } from './operator-actions.js';
import { type StartDeps, type StartOutcome, type StartResult, startBatch } from './starts.js';

export type { StartOutcome } from './starts.js';

/** Starting runs and operator actions on them. Every action goes through the run's row lock. */
export class RunService {
  constructor(
    private readonly ctx: StartDeps,
    private readonly operatorActions: OperatorActionService,
  ) {}

  /**
   * Starts a run on the latest (or a pinned) version: checks the input against the definition's schema,
   * inserts the run and decides its first step in one transaction. Starts arriving together share a
   * transaction (each start still gets its own answer, and a bad one fails alone). With an idempotency
   * key, a repeated start returns the run the key started.
   */
  async start(request: StartRequest): Promise<RunRecord> {
    return (await this.open(request)).run;
  }

  /** Like `start`, and says whether the run was created now or already existed (an idempotent repeat). */
  async open(request: StartRequest): Promise<StartOutcome> {
    const outcome = await this.starts.submit(request);
    if (!outcome.ok) throw outcome.error;
    return outcome.outcome;
  }

  private readonly starts = new Batcher<StartRequest, StartResult>(
    (requests) => startBatch(this.ctx, requests),
    // A burst of 200 starts goes as two transactions side by side rather than one: the first runs' first
    // tasks start while the second half is still being written (W1's embedded burst about 4% faster,
    // rounds of 100 and 200 interleaved in one process).
    {
      maxBatch: 100,
      maxInFlight: 4,
    },
  );

  /** Cancels a run (an operator action): unfinished tasks are cancelled, reports refused. */
  async cancel(runId: string, by: string, reason?: string, namespace?: string): Promise<RunRecord> {
    if (namespace !== undefined) await this.get(runId, namespace);
    return this.operatorActions.cancel(runId, { by, ...(reason ? { reason } : {}) });
  }

  /** A run, or a `run_not_found` error (also when it belongs to another namespace than the one given). */
  async get(runId: string, namespace?: string): Promise<RunRecord> {
    const run = await this.ctx.store.getRun(runId);
    if (!run) throw notFound(runId);
    if (namespace !== undefined && run.namespace !== namespace)
      throw new WeftError('run_not_found', `there is no run ${runId} in namespace "${namespace}"`, 404);
    return run;
  }

  /**
   * Decides events under the run's row lock, after claiming its pending decision, with the run's inbox
   * (invariant 1). Operator actions go through the engine's OperatorActionService, which checks them.
   */
  async applyEvents(
    runId: string,
    events: (run: LockedRun, tx: StoreTx) => RunEvent[] | Promise<RunEvent[]>,
  ): Promise<RunRecord> {
    return this.operatorActions.applyEvents(runId, events);
  }
}
