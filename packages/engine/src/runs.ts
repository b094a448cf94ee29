import { checkSchema, isTerminalRun, type Json, type RunEvent, WeftError } from '@weft/core';
import type { EngineContext } from './context.js';
import { uuidv7 } from './ids.js';
import { Pass } from './pass.js';
import type { LockedRun, RunRecord } from './records.js';
import type { StoreTx } from './store.js';

/** What a run start asks for. */
export interface StartRequest {
  readonly namespace: string;
  readonly definition: string;
  /** A pinned version; the latest when absent. */
  readonly version?: number;
  readonly input: Json;
}

/** Starting runs and operator actions on them. Every action goes through the run's row lock. */
export class RunService {
  constructor(private readonly ctx: EngineContext) {}

  /**
   * Starts a run on the latest (or a pinned) version: checks the input against the definition's schema,
   * inserts the run and decides its first step in one transaction.
   */
  async start(request: StartRequest): Promise<RunRecord> {
    const { record, workflow } = await this.ctx.definitions.resolve(
      request.namespace,
      request.definition,
      request.version,
    );
    if (workflow.definition.inputSchema) {
      const check = checkSchema(workflow.definition.inputSchema, request.input);
      if (!check.ok) {
        throw new WeftError(
          'invalid_input',
          `the input does not match the input_schema of ${record.name} v${record.version}: ${check.error}`,
          400,
        );
      }
    }
    const id = uuidv7();
    const { run, pass } = await this.ctx.store.transaction(async (tx) => {
      const pass = new Pass(this.ctx.dispatcher);
      const locked = await tx.insertRun({
        id,
        namespace: request.namespace,
        definitionId: record.id,
        definitionName: record.name,
        definitionVersion: record.version,
        input: request.input,
      });
      await this.ctx.evaluator.decideRun(tx, locked, false, [{ kind: 'run_started' }], pass);
      await pass.finish(tx, this.ctx.config.crossProcessWakeups);
      return { run: locked, pass };
    });
    pass.afterCommit(this.ctx.wakeups);
    const { lastSeq: _s, now: _n, ...plain } = run;
    return plain;
  }

  /** Cancels a run: unfinished tasks are cancelled and reports for them are refused from now on. */
  async cancel(runId: string, by: string, reason?: string): Promise<RunRecord> {
    return this.control(runId, (run) => {
      if (isTerminalRun(run.status)) {
        throw new WeftError(
          'run_not_active',
          `run ${runId} is already ${run.status}; only a running or paused run can be cancelled`,
          409,
        );
      }
      return [{ kind: 'run_cancelled', by, ...(reason ? { reason } : {}) }];
    });
  }

  /** A run, or a `run_not_found` error. */
  async get(runId: string): Promise<RunRecord> {
    const run = await this.ctx.store.getRun(runId);
    if (!run) throw notFound(runId);
    return run;
  }

  /**
   * Applies an operator action under the run's row lock: claims any pending decision, then decides the
   * run's inbox and the action's events in one transaction (seed 001, invariant 4).
   */
  async control(
    runId: string,
    events: (run: LockedRun, tx: StoreTx) => RunEvent[] | Promise<RunEvent[]>,
  ): Promise<RunRecord> {
    const pass = await this.ctx.store.transaction(async (tx) => {
      const pass = new Pass(this.ctx.dispatcher);
      const [run] = await tx.lockRuns([runId], 'wait');
      if (!run) throw notFound(runId);
      const own = await events(run, tx);
      const claimed = await tx.claimDecisions([runId]);
      await this.ctx.evaluator.decideRun(tx, run, claimed.length > 0, own, pass);
      await pass.finish(tx, this.ctx.config.crossProcessWakeups);
      return pass;
    });
    pass.afterCommit(this.ctx.wakeups);
    return this.get(runId);
  }
}

function notFound(runId: string): WeftError {
  return new WeftError('run_not_found', `there is no run ${runId}`, 404);
}
