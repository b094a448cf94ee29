import { type RunEvent, WeftError } from '@weft/core';
import type { EngineContext } from './context.js';
import { fault } from './faults.js';
import { type EagerSlot, Pass } from './pass.js';
import type { LeasedTask, ReportVerdict, TaskReport } from './records.js';

/** A worker's request for tasks. */
export interface PollRequest {
  readonly namespace: string;
  readonly worker: string;
  readonly taskTypes: readonly string[];
  readonly max: number;
  /** How long to wait for a task when none is ready (long poll); 0 answers at once. */
  readonly waitMs: number;
  /** Aborts the wait (the worker hung up). */
  readonly signal?: AbortSignal;
}

/** What a worker is told with each lease. */
export interface LeaseTerms {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
}

/** Reports from one worker, and optionally room for more tasks to be handed back straight away. */
export interface ReportRequest {
  readonly namespace: string;
  readonly worker: string;
  readonly reports: readonly TaskReport[];
  readonly next?: { readonly taskTypes: readonly string[]; readonly max: number };
}

/**
 * The one place workers deal with: leasing, heartbeats and reports (seed 001, invariant 7: the queue and
 * the task can never disagree about who holds a task, because both change in one statement here).
 */
export class TaskService {
  constructor(private readonly ctx: EngineContext) {}

  /** Lease terms every worker gets. */
  get terms(): LeaseTerms {
    return { leaseMs: this.ctx.config.leaseMs, heartbeatMs: this.ctx.config.heartbeatMs };
  }

  /**
   * Leases up to `max` queued tasks of the given types, waiting up to `waitMs` for one to appear. The
   * waiter is registered before looking, so a task queued in between wakes it (no busy polling).
   */
  async poll(request: PollRequest): Promise<LeasedTask[]> {
    checkTypes(request.taskTypes);
    const deadline = Date.now() + Math.min(request.waitMs, this.ctx.config.maxPollWaitMs);
    for (;;) {
      const waiter = this.ctx.wakeups.subscribe(request.namespace, request.taskTypes);
      try {
        const leased = await this.ctx.store.transaction((tx) =>
          tx.leaseTasks({
            namespace: request.namespace,
            taskTypes: request.taskTypes,
            max: request.max,
            worker: request.worker,
            leaseMs: this.ctx.config.leaseMs,
          }),
        );
        const left = deadline - Date.now();
        if (leased.length > 0 || left <= 0 || request.signal?.aborted) return leased;
        let timer: NodeJS.Timeout | undefined;
        let onAbort: (() => void) | undefined;
        await Promise.race([
          waiter.ready,
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, left);
            onAbort = resolve;
            request.signal?.addEventListener('abort', onAbort, { once: true });
          }),
        ]);
        clearTimeout(timer);
        if (onAbort) request.signal?.removeEventListener('abort', onAbort);
      } finally {
        waiter.cancel();
      }
    }
  }

  /**
   * Applies reports and decides what follows in the same transaction where possible: runs whose lock is
   * free are decided here; runs another transaction holds get the event in their inbox and a decide-queue
   * request, taken before any task row so that lock order matches the deciders'. With `next`, tasks this
   * decision creates for the worker's types go straight to it.
   */
  async report(request: ReportRequest): Promise<{ verdicts: ReportVerdict[]; leased: LeasedTask[] }> {
    if (request.reports.length === 0) return { verdicts: [], leased: [] };
    const eager: EagerSlot | null =
      request.next && request.next.max > 0
        ? {
            worker: request.worker,
            namespace: request.namespace,
            taskTypes: new Set(request.next.taskTypes),
            max: request.next.max,
            leaseMs: this.ctx.config.leaseMs,
          }
        : null;
    try {
      return await this.applyReports(request, eager, true);
    } catch (e) {
      if (e instanceof WeftError || isDatabaseError(e)) throw e;
      // A decision failed (an engine bug, not the worker's fault). Keep the report: record it and leave
      // the decision to the background decider, which backs off and shows the error.
      return this.applyReports(request, null, false);
    }
  }

  /**
   * One transaction for a batch of reports. When every run of the batch is free, they are decided here,
   * after claiming their decide-queue rows. Otherwise no run is decided here: each gets a decide-queue
   * request and its events go to its inbox. A transaction thus either claims decide-queue rows or upserts
   * them, never both, and always in run id order, so two batches cannot deadlock on those rows.
   */
  private async applyReports(
    request: ReportRequest,
    eager: EagerSlot | null,
    inline: boolean,
  ): Promise<{ verdicts: ReportVerdict[]; leased: LeasedTask[] }> {
    const runIds = [...new Set(request.reports.map((r) => r.runId))];
    let deferred = false;
    // A transaction may be retried (deadlock, serialisation failure): each attempt builds its own pass.
    const { verdicts, pass } = await this.ctx.store.transaction(async (tx) => {
      const pass = new Pass(this.ctx.dispatcher, eager);
      const locked = inline ? await tx.lockRuns(runIds, 'skip') : [];
      deferred = locked.length < runIds.length;
      const claimed = deferred ? [] : await tx.claimDecisions(runIds);
      if (deferred) await tx.requestDecisions(runIds, 'task report');
      const verdicts = await tx.finishTasks(request.reports);
      await fault('report.after-finish');
      const events = new Map<string, RunEvent[]>();
      request.reports.forEach((report, i) => {
        const event = toEvent(report, verdicts[i]!, request.worker);
        if (!event) return;
        const list = events.get(report.runId) ?? [];
        list.push(event);
        events.set(report.runId, list);
      });
      if (deferred) {
        for (const [runId, list] of events)
          pass.writes.inboxAppend.push(...list.map((event) => ({ runId, event })));
        if (this.ctx.config.crossProcessWakeups) await tx.notify([{ kind: 'decisions' }]);
      } else {
        const claimedIds = new Set(claimed);
        for (const run of locked)
          await this.ctx.evaluator.decideRun(tx, run, claimedIds.has(run.id), events.get(run.id) ?? [], pass);
      }
      await pass.finish(tx, this.ctx.config.crossProcessWakeups);
      return { verdicts, pass };
    });
    await fault('report.after-commit');
    pass.afterCommit(this.ctx.wakeups);
    if (deferred) this.ctx.wakeups.publish({ kind: 'decisions' });
    return { verdicts, leased: pass.leased };
  }

  /** Renews leases; returns which are still held and which were lost (cancelled run, expired, taken over). */
  async heartbeat(
    namespace: string,
    worker: string,
    tasks: readonly { runId: string; taskId: string; attempt: number; leaseToken: string }[],
  ): Promise<{ held: string[]; lost: string[] }> {
    if (tasks.length === 0) return { held: [], lost: [] };
    void namespace;
    const held = await this.ctx.store.transaction(async (tx) => {
      const renewed = new Set(await tx.renewLeases(tasks, this.ctx.config.leaseMs));
      const lost = tasks.filter((t) => !renewed.has(t.taskId));
      if (lost.length > 0) {
        // Record refused heartbeats in history through the inbox: a worker holds no run lock.
        await tx.requestDecisions([...new Set(lost.map((t) => t.runId))], 'refused heartbeat');
        const why = new Map((await tx.explainRefusals(lost)).map((v) => [v.taskId, v]));
        await tx.appendInbox(
          lost.flatMap((t) => {
            const v = why.get(t.taskId);
            if (!v || v.accepted || v.nodeId === undefined) return [];
            const event: RunEvent = {
              kind: 'report_refused',
              nodeId: v.nodeId,
              iteration: v.iteration ?? '',
              attempt: t.attempt,
              report: 'heartbeat',
              why: v.why,
              worker,
            };
            return [{ runId: t.runId, event }];
          }),
        );
      }
      return renewed;
    });
    this.ctx.wakeups.publish({ kind: 'decisions' });
    return {
      held: tasks.filter((t) => held.has(t.taskId)).map((t) => t.taskId),
      lost: tasks.filter((t) => !held.has(t.taskId)).map((t) => t.taskId),
    };
  }
}

function toEvent(report: TaskReport, verdict: ReportVerdict, worker: string): RunEvent | null {
  if (verdict.accepted) {
    if (report.outcome.kind === 'completed') {
      return {
        kind: 'node_completed',
        nodeId: verdict.nodeId,
        iteration: verdict.iteration,
        attempt: verdict.attempt,
      };
    }
    return {
      kind: 'node_failed',
      nodeId: verdict.nodeId,
      iteration: verdict.iteration,
      attempt: verdict.attempt,
      error: report.outcome.error,
    };
  }
  if (verdict.nodeId === undefined) return null;
  return {
    kind: 'report_refused',
    nodeId: verdict.nodeId,
    iteration: verdict.iteration ?? '',
    attempt: report.attempt,
    report: report.outcome.kind === 'completed' ? 'complete' : 'fail',
    why: verdict.why,
    worker,
  };
}

function checkTypes(types: readonly string[]): void {
  if (types.length === 0) throw new WeftError('bad_request', 'name at least one task type to poll for', 400);
}

function isDatabaseError(e: unknown): boolean {
  return (
    typeof (e as { code?: unknown })?.code === 'string' && /^[0-9A-Z]{5}$/.test((e as { code: string }).code)
  );
}
