import { type Json, type ReusedNode, WeftError, type Workflow } from '@weft/core';
import { BlobUses } from '../payloads/blob-uses.js';
import type { RunRecord } from '../store/records.js';
import type { LoadedTask } from '../store/store.js';
import { uuidv7 } from '../support/ids.js';
import { notFound } from './operator-actions.js';
import { checkInput, type StartDeps } from './starts.js';

/** A fork: a new run from an existing one, with another input and/or version, reusing outputs up to a node. */
export interface ForkRequest {
  readonly namespace: string;
  readonly runId: string;
  /** The new run's input; the source's when absent. */
  readonly input?: Json;
  /** The version of the source's definition to run; the source's when absent. */
  readonly version?: number;
  /** Reuse the output of this top-level node and of every node before it; reuse nothing when absent. */
  readonly upToNode?: string;
  readonly by?: string;
}

/**
 * Forks runs. The nodes reused are `upToNode` and its predecessors, all the way up, in the new run's version,
 * plus the nodes the source skipped right after them (the branches its switches did not take). Each must have
 * finished in the source: completed (`upToNode` itself must be) or skipped. The new run is inserted and decided
 * in one transaction, as a start is (under its namespace's quota), with a `run_forked` event that finishes the
 * reused nodes with the source's outputs and passes control on from them; the fork is recorded with it, so
 * each run links to the other.
 */
export class ForkService {
  constructor(private readonly ctx: StartDeps) {}

  async fork(request: ForkRequest): Promise<RunRecord> {
    const { store, payloads } = this.ctx;
    const source = await store.getRun(request.runId);
    if (!source || source.namespace !== request.namespace) throw notFound(request.runId);
    const version = request.version ?? source.definitionVersion;
    const { record, workflow } = await this.ctx.definitions.resolve(
      request.namespace,
      source.definitionName,
      version,
    );
    const input = request.input !== undefined ? request.input : await payloads.resolveDeep(source.input);
    await this.ctx.extensions.checkStart(
      {
        namespace: request.namespace,
        definition: record.name,
        version: record.version,
        input,
        ...(request.by ? { by: request.by } : {}),
      },
      record,
    );
    checkInput(workflow, record, { input });
    let reused: ReusedNode[] = [];
    if (request.upToNode !== undefined) {
      const rows = await store.transaction((tx) => tx.loadRunTasks([source.id]));
      reused = await Promise.all(
        reusedNodes(workflow, source.id, request.upToNode, rows).map(async (r) => ({
          ...r,
          output: r.output === null ? null : await payloads.resolveDeep(r.output),
        })),
      );
    }
    const id = uuidv7();
    const stored = await payloads.offload(input, 'the run input');
    const { pass } = await this.ctx.passes.run(
      null,
      async (tx, pass) => {
        const locking = tx.lockQuotas([request.namespace]);
        const inserting = tx.insertRuns([
          {
            id,
            namespace: request.namespace,
            definitionId: record.id,
            definitionName: record.name,
            definitionVersion: record.version,
            input: stored,
          },
        ]);
        const [, [run]] = await Promise.all([locking, inserting]);
        if (!run) throw quotaFull(request.namespace);
        await tx.recordFork({ runId: id, forkedFrom: source.id, upToNode: request.upToNode ?? null });
        this.ctx.runs.remember(id, record.id);
        const event = {
          kind: 'run_forked' as const,
          fromRunId: source.id,
          upToNode: request.upToNode ?? null,
          reused,
          ...(request.by ? { by: request.by } : {}),
        };
        await this.ctx.evaluator.decideRuns(tx, [{ run, claimed: false, fresh: true, own: [event] }], pass);
        await pass.finish(tx);
      },
      undefined,
      BlobUses.of(id, stored, input),
    );
    await this.ctx.passes.committed(pass);
    this.ctx.stats.runsStarted += 1;
    const run = await store.getRun(id);
    if (!run) throw notFound(id);
    return run;
  }
}

/** The nodes a fork up to `upToNode` reuses from the source's rows, or a 409 saying why it cannot. */
export function reusedNodes(
  workflow: Workflow,
  sourceId: string,
  upToNode: string,
  rows: readonly LoadedTask[],
): ReusedNode[] {
  const { graph } = workflow;
  if (!graph.nodes.has(upToNode) || graph.parent.get(upToNode) !== null)
    throw new WeftError(
      'bad_fork',
      `"${upToNode}" is not a top-level node of ${workflow.definition.name}: fork up to a node outside loops and maps`,
      400,
    );
  const latest = new Map(rows.filter((r) => r.iteration === '').map((r) => [r.nodeId, r]));
  const chosen = new Set<string>();
  const stack = [upToNode];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (chosen.has(id)) continue;
    chosen.add(id);
    stack.push(...(graph.predecessors.get(id) ?? []));
  }
  for (const id of chosen) {
    const row = latest.get(id);
    const ok = row && (row.status === 'completed' || (row.status === 'skipped' && id !== upToNode));
    if (!ok)
      throw new WeftError(
        'fork_not_possible',
        `node "${id}" is ${row ? row.status : 'not reached'} in run ${sourceId}: fork up to a node that completed, after every node before it finished`,
        409,
      );
  }
  // The branches the source did not take right after the reused nodes stay untaken.
  for (let grew = true; grew; ) {
    grew = false;
    for (const [id, row] of latest) {
      if (chosen.has(id) || row.status !== 'skipped' || graph.parent.get(id) !== null) continue;
      const preds = graph.predecessors.get(id) ?? [];
      if (preds.length > 0 && preds.every((p) => chosen.has(p))) {
        chosen.add(id);
        grew = true;
      }
    }
  }
  return graph.order
    .filter((id) => chosen.has(id))
    .map((id) => {
      const row = latest.get(id)!;
      return { nodeId: id, status: row.status as 'completed' | 'skipped', output: row.output };
    });
}

function quotaFull(namespace: string): WeftError {
  return new WeftError(
    'quota_exceeded',
    `namespace "${namespace}" has as many running runs as its quota allows; wait for some to finish, or raise the quota (weft limits set quota N)`,
    429,
  );
}
