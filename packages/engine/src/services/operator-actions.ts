import {
  checkOperatorRequest,
  isTaskRequest,
  type Json,
  type OperatorRequest,
  type RunEvent,
  type TaskState,
  WeftError,
} from '@weft/core';
import type { Evaluator } from '../decisions/evaluator.js';
import type { PassRunner } from '../decisions/pass-runner.js';
import { runView } from '../decisions/run-view.js';
import type { LockedRun, RunRecord } from '../store/records.js';
import type { LoadedTask, Store, StoreTx } from '../store/store.js';
import { fault } from '../support/faults.js';
import type { DefinitionService } from './definitions.js';

/** What operator actions use. */
export interface OperatorActionDeps {
  readonly store: Store;
  readonly passes: PassRunner;
  readonly evaluator: Evaluator;
  readonly definitions: Pick<DefinitionService, 'workflow'>;
}

/** Who asks, and why: kept in the run's history with the action. */
export interface Asker {
  readonly by: string;
  readonly reason?: string;
}

/**
 * Operator actions on runs: pause, resume, cancel, terminate, retry, rerun, and finishing a task by hand
 * (skip, complete, fail). Every action is one transaction that locks the run's row (waiting for it), claims
 * the run's pending decision before reading anything, checks the action against the run as it is then, and
 * decides the action together with the events waiting in the run's inbox. So an operator's action and an
 * evaluation are strictly ordered, never interleaved (invariant 1; test: "terminate racing a completion"). An
 * action that makes no sense in the run's state is refused with a 409 that names the state, and changes
 * nothing.
 */
export class OperatorActionService {
  constructor(private readonly ctx: OperatorActionDeps) {}

  /** Stops new work from starting; tasks already leased may finish and their results are kept. */
  pause(runId: string, asker: Asker): Promise<RunRecord> {
    return this.act(runId, { kind: 'pause', ...asker });
  }

  /** Resumes a paused run and decides what arrived while it was paused. */
  resume(runId: string, asker: Asker): Promise<RunRecord> {
    return this.act(runId, { kind: 'resume', ...asker });
  }

  /** Cancels a running or paused run: open tasks are cancelled and their reports refused from now on. */
  cancel(runId: string, asker: Asker): Promise<RunRecord> {
    return this.act(runId, { kind: 'cancel', ...asker });
  }

  /** Like cancel, but the run ends as `terminated`; a reason is required. */
  terminate(runId: string, asker: Asker): Promise<RunRecord> {
    return this.act(runId, { kind: 'terminate', ...asker });
  }

  /** Runs the failed, timed-out and cancelled nodes of a finished run again; completed outputs are kept. */
  retry(runId: string, asker: Asker): Promise<RunRecord> {
    return this.act(runId, { kind: 'retry', ...asker });
  }

  /** Runs `nodeId` and everything downstream of it again, as new attempts; upstream outputs are kept. */
  rerun(runId: string, nodeId: string, asker: Asker & { iteration?: string }): Promise<RunRecord> {
    return this.act(runId, { kind: 'rerun', nodeId, ...asker });
  }

  /** Marks a task skipped (with an optional output that later nodes may read) and continues the run. */
  skipTask(runId: string, nodeId: string, asker: Asker & { iteration?: string; output?: Json }) {
    return this.act(runId, { kind: 'skip', nodeId, ...asker });
  }

  /** Completes a task by hand with the given output, as if its worker had. */
  completeTask(runId: string, nodeId: string, asker: Asker & { iteration?: string; output: Json }) {
    return this.act(runId, { kind: 'complete', nodeId, ...asker });
  }

  /** Fails a task by hand; the node's retry policy applies only if the error says it is retryable. */
  failTask(
    runId: string,
    nodeId: string,
    asker: Asker & {
      iteration?: string;
      error: { message: string; retryable?: boolean; details?: Json };
    },
  ) {
    return this.act(runId, { kind: 'fail', nodeId, ...asker });
  }

  /** Applies a checked operator request in one transaction under the run's row lock. */
  async act(runId: string, request: OperatorRequest): Promise<RunRecord> {
    return this.locked(runId, async (tx, run) => {
      const workflow = await this.ctx.definitions.workflow(run.definitionId);
      const rows = await this.read(tx, run, request);
      const checked = checkOperatorRequest(workflow, runView(run), rows.map(state), request);
      if (!checked.ok) {
        const { code, message, status } = checked.error;
        throw new WeftError(code, message, status, { run_id: run.id, status: run.status });
      }
      const whole = request.kind === 'resume' || request.kind === 'retry' || request.kind === 'rerun';
      return { own: [checked.value], ...(whole ? { wholeRun: rows } : {}) };
    });
  }

  /**
   * Decides events built by `events` for one run, under its row lock (for actions that need no check,
   * such as a signal delivered by an engine extension). `events` runs after the claim.
   */
  applyEvents(
    runId: string,
    events: (run: LockedRun, tx: StoreTx) => RunEvent[] | Promise<RunEvent[]>,
  ): Promise<RunRecord> {
    return this.locked(runId, async (tx, run) => ({ own: await events(run, tx) }));
  }

  private async locked(
    runId: string,
    build: (tx: StoreTx, run: LockedRun) => Promise<{ own: RunEvent[]; wholeRun?: readonly LoadedTask[] }>,
  ): Promise<RunRecord> {
    const { pass } = await this.ctx.passes.run(
      null,
      async (tx, pass) => {
        const [run] = await tx.lockRuns([runId], 'wait');
        if (!run) throw notFound(runId);
        // Claim before reading anything else (invariants 2 and 3): an event committed after this point earns
        // its own decision; one committed before is in the inbox this decision reads.
        const claimed = await tx.claimDecisions([runId]);
        await fault('control.after-claim');
        const { own, wholeRun } = await build(tx, run);
        await this.ctx.evaluator.decideRuns(
          tx,
          [{ run, claimed: claimed.length > 0, own, ...(wholeRun ? { wholeRun } : {}) }],
          pass,
        );
        await pass.finish(tx);
      },
      { source: 'operator' },
    );
    await this.ctx.passes.committed(pass);
    const after = await this.ctx.store.getRun(runId);
    if (!after) throw notFound(runId);
    return after;
  }

  /** What the check of a request reads: the task it acts on (locked), or every instance of the run. */
  private async read(tx: StoreTx, run: LockedRun, request: OperatorRequest): Promise<LoadedTask[]> {
    if (isTaskRequest(request)) {
      return tx.lockTasks([{ runId: run.id, nodeId: request.nodeId, iteration: request.iteration ?? '' }]);
    }
    if (request.kind === 'retry' || request.kind === 'rerun' || request.kind === 'resume') {
      return tx.loadRunTasks([run.id]);
    }
    return [];
  }
}

/** The error for a run id that does not exist. */
export function notFound(runId: string): WeftError {
  return new WeftError('run_not_found', `there is no run ${runId}`, 404);
}

function state(row: LoadedTask): TaskState {
  const { id: _id, runId: _runId, ...rest } = row;
  return rest;
}
