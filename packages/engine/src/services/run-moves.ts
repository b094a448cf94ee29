import {
  moveRefusals,
  type NodeMap,
  nodeMapProblems,
  type RunMove,
  type RunStatus,
  type TaskState,
  WeftError,
  type Workflow,
} from '@weft/core';
import type { Evaluator } from '../decisions/evaluator.js';
import type { PassRunner } from '../decisions/pass-runner.js';
import type { DefinitionRecord, LockedRun, RunRecord } from '../store/records.js';
import type { LoadedTask, Store, StoreTx } from '../store/store.js';
import { fault } from '../support/faults.js';
import type { DefinitionService } from './definitions.js';
import type { Asker } from './operator-actions.js';
import type { RunIndex } from './run-index.js';

/** What moving runs uses. */
export interface RunMoveDeps {
  readonly store: Store;
  readonly passes: PassRunner;
  readonly evaluator: Evaluator;
  readonly definitions: Pick<DefinitionService, 'workflow' | 'resolve'>;
  readonly runs: RunIndex;
}

/** Which runs to move, and where to. */
export interface MoveTarget {
  readonly namespace: string;
  /** The definition's name: runs move between versions of one definition. */
  readonly definition: string;
  readonly toVersion: number;
  /** Old node id to new node id, for nodes whose id changed. */
  readonly nodeMap?: NodeMap;
}

/** Which runs a plan looks at: the ids given, or the running and paused runs of a version (a page). */
export interface MoveSelection extends MoveTarget {
  readonly runIds?: readonly string[];
  readonly fromVersion?: number;
  /** Without ids: runs in this status (default `running`). */
  readonly status?: 'running' | 'paused';
  /** Runs per page (default 100, at most 1000); newest first. */
  readonly limit?: number;
  readonly cursor?: string;
}

/** Whether one run can move, and if not, why. */
export interface MoveVerdict {
  readonly runId: string;
  readonly fromVersion: number | null;
  readonly movable: boolean;
  readonly reasons: readonly string[];
}

/** A plan: a verdict per run, and where the next page starts (null when all were seen). */
export interface MovePlan {
  readonly toVersion: number;
  readonly runs: readonly MoveVerdict[];
  readonly next: string | null;
}

/** What a move did to one run. */
export interface MoveOutcome {
  readonly runId: string;
  readonly moved: boolean;
  readonly fromVersion: number | null;
  readonly reasons: readonly string[];
}

/** Most runs one plan or move call takes. */
export const MAX_MOVE_RUNS = 1000;

/**
 * Moves runs in flight to another version of their definition. A plan says, per run, whether it can move and
 * why not (`moveRefusals`), read without locks: it is advice. A move checks each run again under its row lock,
 * after claiming its pending decision, and then, in the same transaction, renames its rows and points it at
 * the new version (`StoreTx.moveRun`) and decides a `run_migrated` event, which records `run.migrated` in its
 * history with the events waiting in its inbox. One transaction per run: a refusal never undoes another move.
 */
export class RunMoveService {
  constructor(private readonly ctx: RunMoveDeps) {}

  /** The verdict for each selected run. */
  async plan(selection: MoveSelection): Promise<MovePlan> {
    const target = await this.target(selection);
    const { runs, missing, next } = await this.select(selection);
    const tasks = await this.ctx.store.transaction((tx) => tx.loadRunTasks(runs.map((r) => r.id)));
    const verdicts: MoveVerdict[] = missing.map((runId) => ({
      runId,
      fromVersion: null,
      movable: false,
      reasons: [`there is no run ${runId} in namespace "${selection.namespace}"`],
    }));
    for (const run of runs) {
      const own = tasks.filter((t) => t.runId === run.id);
      const reasons = await this.refusals(target, run, own);
      verdicts.push({
        runId: run.id,
        fromVersion: run.definitionVersion,
        movable: reasons.length === 0,
        reasons,
      });
    }
    return { toVersion: target.record.version, runs: verdicts, next };
  }

  /** Moves each named run (the ids of a plan), one transaction each, checking it again under its lock. */
  async apply(target: MoveTarget & { runIds: readonly string[] }, asker: Asker): Promise<MoveOutcome[]> {
    if (target.runIds.length > MAX_MOVE_RUNS)
      throw new WeftError(
        'too_many_runs',
        `move at most ${MAX_MOVE_RUNS} runs per call: split the list`,
        400,
      );
    const resolved = await this.target(target);
    const outcomes: MoveOutcome[] = [];
    for (const runId of [...new Set(target.runIds)])
      outcomes.push(await this.moveOne(resolved, runId, asker));
    return outcomes;
  }

  private async moveOne(target: ResolvedTarget, runId: string, asker: Asker): Promise<MoveOutcome> {
    let outcome: MoveOutcome = { runId, moved: false, fromVersion: null, reasons: [] };
    const { pass } = await this.ctx.passes.run(null, async (tx, pass) => {
      const [run] = await tx.lockRuns([runId], 'wait');
      if (!run || run.namespace !== target.namespace) {
        outcome = { ...outcome, reasons: [`there is no run ${runId} in namespace "${target.namespace}"`] };
        return;
      }
      // Claim before reading anything else (invariants 2 and 3): an event committed after this point earns
      // its own decision, and is decided on the new version.
      const claimed = await tx.claimDecisions([runId]);
      await fault('move.after-claim');
      const reasons = await this.refusals(target, run, await lockedTasks(tx, runId));
      outcome = { runId, moved: reasons.length === 0, fromVersion: run.definitionVersion, reasons };
      if (reasons.length > 0) {
        // Refused: the claimed decision is still owed. Decide what waits in the inbox, as any pass would;
        // committing the claim without it would strand those events (invariants 2 and 4).
        await this.ctx.evaluator.decideRuns(tx, [{ run, claimed: claimed.length > 0, own: [] }], pass);
        await pass.finish(tx);
        return;
      }
      await tx.moveRun({
        runId,
        definitionId: target.record.id,
        definitionVersion: target.record.version,
        renames: target.nodeMap,
      });
      const moved: LockedRun = {
        ...run,
        definitionId: target.record.id,
        definitionVersion: target.record.version,
      };
      const event = {
        kind: 'run_migrated' as const,
        fromVersion: run.definitionVersion,
        toVersion: target.record.version,
        nodeMap: target.nodeMap,
        ...asker,
      };
      await this.ctx.evaluator.decideRuns(
        tx,
        [{ run: moved, claimed: claimed.length > 0, own: [event] }],
        pass,
      );
      await pass.finish(tx);
    });
    await this.ctx.passes.committed(pass);
    if (outcome.moved) this.ctx.runs.moved(runId, target.record.id);
    return outcome;
  }

  /** Why a run cannot move (empty when it can). */
  private async refusals(
    target: ResolvedTarget,
    run: { definitionId: string; definitionName: string; definitionVersion: number; status: RunStatus },
    tasks: readonly LoadedTask[],
  ): Promise<string[]> {
    if (run.definitionName !== target.record.name)
      return [`the run is of definition "${run.definitionName}", not "${target.record.name}"`];
    if (run.definitionId === target.record.id)
      return [`the run is on version ${target.record.version} already`];
    const from = await this.ctx.definitions.workflow(run.definitionId);
    const problems = nodeMapProblems(from, target.workflow, target.nodeMap, target.record.version);
    if (problems.length > 0) return problems;
    const move: RunMove = {
      from,
      to: target.workflow,
      toVersion: target.record.version,
      nodeMap: target.nodeMap,
    };
    return moveRefusals(move, run.status, tasks.map(taskState));
  }

  private async target(target: MoveTarget): Promise<ResolvedTarget> {
    const { record, workflow } = await this.ctx.definitions.resolve(
      target.namespace,
      target.definition,
      target.toVersion,
    );
    return { namespace: target.namespace, record, workflow, nodeMap: target.nodeMap ?? {} };
  }

  /** The runs a plan looks at, and the ids it was given that name no run of the namespace. */
  private async select(selection: MoveSelection) {
    const { store } = this.ctx;
    if (selection.runIds) {
      if (selection.runIds.length > MAX_MOVE_RUNS)
        throw new WeftError(
          'too_many_runs',
          `plan at most ${MAX_MOVE_RUNS} runs per call: split the list`,
          400,
        );
      const ids = [...new Set(selection.runIds)];
      const found = await Promise.all(ids.map((id) => store.getRun(id)));
      const runs = found.filter((r): r is RunRecord => r !== null && r.namespace === selection.namespace);
      const missing = ids.filter((id) => !runs.some((r) => r.id === id));
      return { runs, missing, next: null };
    }
    const page = await store.listRuns({
      namespace: selection.namespace,
      definition: selection.definition,
      status: selection.status ?? 'running',
      limit: Math.min(selection.limit ?? 100, MAX_MOVE_RUNS),
      ...(selection.fromVersion !== undefined ? { version: selection.fromVersion } : {}),
      ...(selection.cursor ? { cursor: selection.cursor } : {}),
    });
    return { runs: page.items, missing: [], next: page.next };
  }
}

interface ResolvedTarget {
  readonly namespace: string;
  readonly record: DefinitionRecord;
  readonly workflow: Workflow;
  readonly nodeMap: NodeMap;
}

/**
 * The latest attempt of every node instance of a locked run, its open attempts locked (`FOR UPDATE`) and
 * read again once locked. Nothing without the run lock (the lease reaper, a lease, a report that could not
 * decide) can end or take one of them until the move commits, so the check sees what the move renames; and
 * an event such a writer left in the inbox has committed before the move renames the inbox (invariant 28;
 * test "renames the event of an attempt the lease reaper ends while the move waits for it").
 */
async function lockedTasks(tx: StoreTx, runId: string): Promise<LoadedTask[]> {
  const all = await tx.loadRunTasks([runId]);
  const open = all.filter((t) => t.status === 'waiting' || t.status === 'queued' || t.status === 'running');
  const locked = await tx.lockTasks(open.map((t) => ({ runId, nodeId: t.nodeId, iteration: t.iteration })));
  const fresh = new Map(locked.map((t) => [`${t.nodeId}\u0000${t.iteration}`, t]));
  return all.map((t) => fresh.get(`${t.nodeId}\u0000${t.iteration}`) ?? t);
}

function taskState(row: LoadedTask): TaskState {
  const { id: _id, runId: _runId, ...rest } = row;
  return rest;
}
