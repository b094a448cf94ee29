import { checkSchema, type Json, type RunEvent, WeftError, type Workflow } from '@weft/core';
import { Batcher } from './batcher.js';
import type { EngineContext } from './context.js';
import { ControlService, notFound } from './control.js';
import { uuidv7 } from './ids.js';
import { inPass } from './pass.js';
import type { DefinitionRecord, LockedRun, RunRecord } from './records.js';
import type { NewRun, StoreTx } from './store.js';

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
  constructor(
    private readonly ctx: EngineContext,
    private readonly controls: ControlService = new ControlService(ctx),
  ) {}

  /**
   * Starts a run on the latest (or a pinned) version: checks the input against the definition's schema,
   * inserts the run and decides its first step in one transaction. Starts arriving together share a
   * transaction (each start still gets its own answer, and a bad one fails alone).
   */
  async start(request: StartRequest): Promise<RunRecord> {
    const outcome = await this.starts.submit(request);
    if (!outcome.ok) throw outcome.error;
    return outcome.run;
  }

  private readonly starts = new Batcher<
    StartRequest,
    { ok: true; run: RunRecord } | { ok: false; error: unknown }
  >((requests) => this.startBatch(requests), { maxBatch: 200, maxInFlight: 4 });

  private async startBatch(
    requests: readonly StartRequest[],
  ): Promise<({ ok: true; run: RunRecord } | { ok: false; error: unknown })[]> {
    const results: ({ ok: true; run: RunRecord } | { ok: false; error: unknown } | null)[] = requests.map(
      () => null,
    );
    const accepted: { index: number; run: NewRun }[] = [];
    const resolved = new Map<string, Promise<{ record: DefinitionRecord; workflow: Workflow }>>();
    for (const [index, request] of requests.entries()) {
      const key = `${request.namespace}\u0000${request.definition}\u0000${request.version ?? ''}`;
      let lookup = resolved.get(key);
      if (!lookup) {
        lookup = this.ctx.definitions.resolve(request.namespace, request.definition, request.version);
        resolved.set(key, lookup);
      }
      try {
        const { record, workflow } = await lookup;
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
        accepted.push({
          index,
          run: {
            id: uuidv7(),
            namespace: request.namespace,
            definitionId: record.id,
            definitionName: record.name,
            definitionVersion: record.version,
            input: request.input,
          },
        });
      } catch (error) {
        results[index] = { ok: false, error };
      }
    }
    if (accepted.length > 0) {
      const { result: runs, pass } = await inPass(this.ctx, null, async (tx, pass) => {
        const locked = await tx.insertRuns(accepted.map((a) => a.run));
        for (const run of locked) this.ctx.runs.remember(run.id, run.definitionId);
        await this.ctx.evaluator.decideRuns(
          tx,
          locked.map((run) => ({ run, claimed: false, fresh: true, own: [{ kind: 'run_started' }] })),
          pass,
        );
        await pass.finish(tx);
        return locked;
      });
      pass.afterCommit(this.ctx.wakeups);
      this.ctx.stats.runsStarted += runs.length;
      const byId = new Map(runs.map((r) => [r.id, r]));
      for (const a of accepted) {
        const { lastSeq: _s, now: _n, ...plain } = byId.get(a.run.id)!;
        results[a.index] = { ok: true, run: plain };
      }
    }
    return results.map((r) => r!);
  }

  /** Cancels a run (through the control service): unfinished tasks are cancelled, reports refused. */
  async cancel(runId: string, by: string, reason?: string): Promise<RunRecord> {
    return this.controls.cancel(runId, { by, ...(reason ? { reason } : {}) });
  }

  /** A run, or a `run_not_found` error. */
  async get(runId: string): Promise<RunRecord> {
    const run = await this.ctx.store.getRun(runId);
    if (!run) throw notFound(runId);
    return run;
  }

  /**
   * Decides events under the run's row lock, after claiming its pending decision, with the run's inbox
   * (seed 001, invariant 4). Operator actions go through the engine's ControlService, which checks them.
   */
  async control(
    runId: string,
    events: (run: LockedRun, tx: StoreTx) => RunEvent[] | Promise<RunEvent[]>,
  ): Promise<RunRecord> {
    return this.controls.applyEvents(runId, events);
  }
}
