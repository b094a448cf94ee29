import { WeftError } from '@weft/core';
import type { EagerSlot } from '../../decisions/hand-over.js';
import type { Pass } from '../../decisions/pass.js';
import type { NamedTask } from '../../dispatch/dispatcher.js';
import type { BlobUses } from '../../payloads/blob-uses.js';
import { ANY_NAMESPACE, namespaceScope } from '../../store/namespaces.js';
import type { LeasedTask, ReportVerdict } from '../../store/records.js';
import type { StoreTx } from '../../store/store.js';
import { fault } from '../../support/faults.js';
import { afterReports } from './after-reports.js';
import { leaseByIdThroughGate, leaseThroughGate } from './gated-lease.js';
import { leaseNamed } from './lease-named.js';
import { distinctReports, eventsByRun, hintEvents } from './report-events.js';
import { leaseQueuedForReport, leaseRestForReport, type ReportRound } from './report-lease.js';
import type { FinishedTaskRedrive, TaskDeps } from './task-deps.js';
import { measureLeases, measureReports } from './task-measures.js';
import type { LeaseTerms, PollRequest, ReportRequest } from './task-requests.js';
import { isValueRefusal, notStorableReport, reportBlobUses, storableOutputs } from './unstorable-outputs.js';

/**
 * The one place workers deal with: leasing, heartbeats and reports (invariant 13: the queue and the task can
 * never disagree about who holds a task, because both change in one statement here).
 */
export class TaskService {
  constructor(
    private readonly ctx: TaskDeps,
    private readonly redispatcher: FinishedTaskRedrive,
  ) {}

  /** Lease terms every worker gets. */
  get terms(): LeaseTerms {
    return { leaseMs: this.ctx.config.leaseMs, heartbeatMs: this.ctx.config.heartbeatMs };
  }

  /**
   * Leases up to `max` queued tasks of the given types, waiting up to `waitMs` for work. The poll is
   * registered before it looks at the queue, so work queued in between is not missed (no busy polling):
   * a transaction that decides a task may hand it to this poll directly, or wake it to look again.
   */
  async poll(request: PollRequest): Promise<LeasedTask[]> {
    checkTypes(request.taskTypes);
    return this.ctx.extensions.withContext(await this.pollLeases(request));
  }

  private async pollLeases(request: PollRequest): Promise<LeasedTask[]> {
    const deadline = Date.now() + Math.min(request.waitMs, this.ctx.config.maxPollWaitMs);
    for (;;) {
      const poll = this.ctx.wakeups.polls.register({
        namespace: request.namespace,
        worker: request.worker,
        taskTypes: request.taskTypes,
        max: request.max,
        ...(request.signal ? { signal: request.signal } : {}),
      });
      let leased: LeasedTask[];
      let retryAt: Date | null;
      try {
        const lease = {
          namespace: request.namespace,
          taskTypes: request.taskTypes,
          max: request.max,
          worker: request.worker,
          leaseMs: this.ctx.config.leaseMs,
        };
        const gate = this.ctx.extensions.gate;
        ({ tasks: leased, retryAt } = gate
          ? await leaseThroughGate(this.ctx, gate, lease)
          : await this.ctx.store.transaction((tx) => tx.leaseTasks(lease)));
        leased = await this.resolveInputs(leased);
      } catch (e) {
        await poll.close();
        throw e;
      }
      this.ctx.stats.leasedByPoll += leased.length;
      measureLeases(this.ctx.stats.meter, leased);
      // A task held back by a rate limit may be taken when its window has room: wake up then at the latest.
      const left = Math.min(deadline, retryAt ? retryAt.getTime() + 5 : deadline) - Date.now();
      if (leased.length > 0 || left <= 0 || request.signal?.aborted || !poll.resume()) {
        const handed = await poll.close();
        if (leased.length > 0 || handed.length > 0 || left <= 0 || request.signal?.aborted)
          return [...leased, ...handed];
        continue; // woken while looking: look again
      }
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      await Promise.race([
        poll.woken,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, left);
          onAbort = resolve;
          request.signal?.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
      clearTimeout(timer);
      if (onAbort) request.signal?.removeEventListener('abort', onAbort);
      const handed = await poll.close();
      if (handed.length > 0 || Date.now() >= deadline || request.signal?.aborted) return handed;
    }
  }

  /** Leased tasks with offloaded inputs fetched back: workers never see a blob reference. */
  private async resolveInputs(tasks: LeasedTask[]): Promise<LeasedTask[]> {
    const payloads = this.ctx.payloads;
    if (!tasks.some((t) => payloads.isRef(t.input))) return tasks;
    return Promise.all(tasks.map(async (t) => ({ ...t, input: await payloads.resolve(t.input) })));
  }

  /**
   * Applies reports and decides what follows in the same transaction where possible: runs whose lock is
   * free are decided here; runs another transaction holds get the event in their inbox and a decide-queue
   * request, taken before any task row so that lock order matches the deciders'. With `next`, tasks this
   * decision creates for the worker's types go straight to it, and queued tasks of those types fill the
   * rest of its room: tasks under no limit in the same transaction, tasks under limits in one of their own
   * right after its commit (see leaseQueuedForReport and leaseRestForReport).
   */
  async report(request: ReportRequest): Promise<{ verdicts: ReportVerdict[]; leased: LeasedTask[] }> {
    if (request.reports.length === 0) return { verdicts: [], leased: [] };
    // A report sent twice in one request is applied once; both copies get its verdict.
    const { reports, indexOf } = distinctReports(request.reports);
    const offloaded = { ...request, reports: await storableOutputs(this.ctx.payloads, reports) };
    const blobs = reportBlobUses(reports, offloaded.reports);
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
    let out: { verdicts: ReportVerdict[]; leased: LeasedTask[] };
    try {
      out = await this.applyReports(offloaded, eager, true, blobs);
    } catch (e) {
      if (isValueRefusal(e) && offloaded.reports.some((r) => r.outcome.kind === 'completed'))
        out = await this.applyEachReport(offloaded, blobs);
      else if (e instanceof WeftError || isDatabaseError(e)) throw e;
      // A decision failed (an engine bug, not the worker's fault). Keep the report: record it and leave
      // the decision to the background decider, which backs off and shows the error.
      else out = await this.applyReports(offloaded, null, false, blobs);
    }
    // A finished task may have freed room under a limit that tasks of other types wait for. The server's
    // own runner reports tasks of any namespace: it wakes the polls of every namespace with limits.
    if (out.verdicts.some((v) => v.accepted)) {
      const namespaces =
        request.namespace === ANY_NAMESPACE
          ? this.ctx.limits.limitedNamespaces()
          : this.ctx.limits.hasLimits(request.namespace)
            ? [request.namespace]
            : [];
      this.ctx.wakeups.announce(namespaces.map((namespace) => ({ kind: 'gates', namespace })));
    }
    const verdicts = indexOf.map((i) => out.verdicts[i]!);
    await afterReports(this.ctx, request, verdicts);
    return {
      verdicts,
      leased: await this.ctx.extensions.withContext(await this.resolveInputs(out.leased)),
    };
  }

  /**
   * After PostgreSQL refused a value in a batch of reports (an output the checks let through), each report
   * again in a transaction of its own: a completed one refused again fails its attempt for good
   * (`output_not_storable`), and the others land as they would have.
   */
  private async applyEachReport(
    request: ReportRequest,
    blobs: BlobUses,
  ): Promise<{ verdicts: ReportVerdict[]; leased: LeasedTask[] }> {
    const verdicts: ReportVerdict[] = [];
    const leased: LeasedTask[] = [];
    for (const report of request.reports) {
      let out: { verdicts: ReportVerdict[]; leased: LeasedTask[] };
      try {
        out = await this.applyReports({ ...request, reports: [report] }, null, true, blobs);
      } catch (e) {
        if (!isValueRefusal(e) || report.outcome.kind !== 'completed') throw e;
        const why = `was refused by PostgreSQL: ${(e as Error).message}`;
        const failed = notStorableReport(report, { path: 'output', message: why });
        out = await this.applyReports({ ...request, reports: [failed] }, null, true, blobs);
      }
      verdicts.push(...out.verdicts);
      leased.push(...out.leased);
    }
    return { verdicts, leased };
  }

  /**
   * One transaction for a batch of reports. It locks the batch's runs in id order, waiting for any that
   * another transaction holds (it holds nothing else yet, so the wait cannot close a cycle), claims their
   * decide-queue rows, applies the reports and decides, then commits: one transaction for the reports,
   * the decisions and the next leases.
   *
   * With `inline` false (after a decision failed with an engine error), nothing is decided here: the
   * reports are applied, and their events go to the runs' inboxes with a decide-queue request, for the
   * background decider, which backs off and shows the error. `blobs`, the large outputs offloaded for the
   * reports, are guarded first in the transaction (invariant 30).
   */
  private async applyReports(
    request: ReportRequest,
    eager: EagerSlot | null,
    inline: boolean,
    blobs: BlobUses,
  ): Promise<{ verdicts: ReportVerdict[]; leased: LeasedTask[] }> {
    const runIds = [...new Set(request.reports.map((r) => r.runId))];
    const { result, pass } = await this.ctx.passes.run(
      eager,
      (tx, pass) =>
        inline
          ? this.decideReports(tx, pass, request, runIds, eager)
          : this.queueReports(tx, pass, request, runIds),
      { source: 'report' },
      blobs,
    );
    const { verdicts, lease } = result;
    await fault('report.after-commit');
    await this.ctx.passes.committed(pass);
    const queued = lease ? await leaseRestForReport(this.ctx, lease) : [];
    const accepted = verdicts.filter((v) => v.accepted).length;
    this.ctx.stats.reportsAccepted += accepted;
    this.ctx.stats.reportsRefused += verdicts.length - accepted;
    this.ctx.stats.leasedWithReport += pass.leased.length + queued.length;
    measureReports(this.ctx.stats.meter, request.reports, verdicts);
    measureLeases(this.ctx.stats.meter, queued);
    if (!inline) this.ctx.wakeups.announce([{ kind: 'decisions' }]);
    return { verdicts, leased: [...pass.leased, ...queued] };
  }

  /**
   * Applies the reports and decides what follows, under the runs' locks (see applyReports); with an eager
   * slot, also leases queued tasks for the worker's room.
   */
  private async decideReports(
    tx: StoreTx,
    pass: Pass,
    request: ReportRequest,
    runIds: readonly string[],
    eager: EagerSlot | null,
  ): Promise<{ verdicts: ReportVerdict[]; lease: ReportRound | null }> {
    // One round trip, in this order on the connection: lock the runs, claim their decide-queue rows,
    // apply the reports, then read the inboxes and the node instances the workers' hints point at.
    // Each statement starts after the one before it has finished, so the claim happens with the locks
    // held and the reads after the claim (invariants 1-3). Reading ahead needs each run's
    // definition: runs this server has seen are known; for others the reads wait for the lock.
    const locking = tx.lockRuns(runIds, 'wait');
    const claiming = tx.claimDecisions(runIds);
    const finishing = tx.finishTasks(request.reports, namespaceScope(request.namespace));
    // Tasks queued with a higher priority go before the worker's next task (read in the same round trip).
    const floor = eager ? tx.queuedPriorities(eager.namespace, [...eager.taskTypes]) : null;
    // If locking fails (a lock timeout), these fail too before anything awaits them: not unhandled.
    // Awaited below, they still throw. Test: "a report whose transaction fails".
    for (const sent of [claiming, finishing, floor]) sent?.catch(() => {});
    const known = runIds.every((id) => this.ctx.runs.definitionOf(id) !== undefined);
    const ahead = (runs: readonly { id: string; definitionId: string }[]) =>
      this.ctx.evaluator.prefetch(
        tx,
        runs.map((run) => ({
          runId: run.id,
          definitionId: run.definitionId,
          claimed: true,
          events: hintEvents(request.reports.filter((r) => r.runId === run.id)),
        })),
      );
    const early = known
      ? await ahead(runIds.map((id) => ({ id, definitionId: this.ctx.runs.definitionOf(id)! })))
      : null;
    const locked = await locking;
    for (const run of locked) this.ctx.runs.remember(run.id, run.definitionId);
    const prefetch = early ?? (await ahead(locked));
    const [claimed, verdicts, priorities] = await Promise.all([claiming, finishing, floor]);
    pass.priorityFloor = priorities;
    await fault('report.after-finish');
    const events = eventsByRun(request, verdicts);
    const claimedIds = new Set(claimed);
    await this.ctx.evaluator.decideRuns(
      tx,
      locked.map((run) => ({ run, claimed: claimedIds.has(run.id), own: events.get(run.id) ?? [] })),
      pass,
      prefetch,
    );
    // Sent before the writes, pipelined with them: no round trip of its own.
    const lease = leaseQueuedForReport(this.ctx, tx, eager, pass, priorities);
    lease?.catch(() => {}); // its failure aborts the transaction: the writes report it
    await pass.finish(tx);
    return { verdicts, lease: lease ? await lease : null };
  }

  /** Applies the reports and leaves their events to the background decider (see applyReports). */
  private async queueReports(
    tx: StoreTx,
    pass: Pass,
    request: ReportRequest,
    runIds: readonly string[],
  ): Promise<{ verdicts: ReportVerdict[]; lease: ReportRound | null }> {
    await tx.requestDecisions(runIds, 'task report');
    const verdicts = await tx.finishTasks(request.reports, namespaceScope(request.namespace));
    for (const [runId, list] of eventsByRun(request, verdicts)) {
      pass.writes.inboxAppend.push(...list.map((event) => ({ runId, event })));
    }
    await pass.finish(tx);
    return { verdicts, lease: null };
  }

  /**
   * Leases tasks named by messages from a queue outside PostgreSQL (the Redis dispatcher). Only tasks
   * still queued at the named attempt are leased, with a fresh fencing token, by the statement that checks
   * it: a duplicate or stale message leases nothing (test: "a duplicate or stale task message is harmless").
   * Tasks under limits are never leased here: the dispatcher keeps them on the table queue, and a task of a
   * type capped since it was announced is moved there (polls waiting for its type are woken).
   */
  async leaseById(request: {
    readonly namespace: string;
    readonly worker: string;
    readonly taskTypes: readonly string[];
    readonly tasks: readonly NamedTask[];
  }): Promise<LeasedTask[]> {
    checkTypes(request.taskTypes);
    if (request.tasks.length === 0) return [];
    const gate = this.ctx.extensions.gate;
    // A message without its type, from a worker asking for one type: the gate is told that type.
    const only = request.taskTypes.length === 1 ? request.taskTypes[0] : undefined;
    const named = request.tasks.map((t) => (t.taskType === undefined && only ? { ...t, taskType: only } : t));
    const leased = gate
      ? await leaseByIdThroughGate(this.ctx, gate, { ...request, tasks: named }, (tasks) =>
          this.leaseNamed(request, tasks),
        )
      : await this.leaseNamed(request, request.tasks);
    // A message for an attempt that has already finished may mean its successors lost their messages (a
    // crash between commit and enqueue): their run is re-driven (invariant 17, the redelivery repair).
    if (leased.length < request.tasks.length && this.ctx.dispatchMode.kind !== 'rows') {
      const got = new Set(leased.map((t) => t.id));
      await this.redispatcher.redriveFinished(request.tasks.filter((t) => !got.has(t.taskId)));
    }
    return this.ctx.extensions.withContext(leased);
  }

  private async leaseNamed(
    request: { readonly namespace: string; readonly worker: string; readonly taskTypes: readonly string[] },
    named: readonly NamedTask[],
  ): Promise<LeasedTask[]> {
    const leased = await leaseNamed(this.ctx, request, named);
    measureLeases(this.ctx.stats.meter, leased);
    return this.resolveInputs(leased);
  }

  /**
   * Renews leases; returns which are still held and which were lost (cancelled run, expired, taken over).
   * The worker's name is part of the protocol; a heartbeat records nothing, so it is not used.
   */
  async heartbeat(
    namespace: string,
    _worker: string,
    tasks: readonly { runId: string; taskId: string; attempt: number; leaseToken: string }[],
  ): Promise<{ held: string[]; lost: string[] }> {
    if (tasks.length === 0) return { held: [], lost: [] };
    // A refused heartbeat is answered `lost` and counted, not recorded in the run's history: a worker's
    // heartbeat racing its own report, or the run's end, is ordinary, and hundreds of such lines would bury
    // the refused reports that matter, which are still recorded.
    const held = new Set(
      await this.ctx.store.transaction((tx) =>
        tx.renewLeases(tasks, this.ctx.config.leaseMs, namespaceScope(namespace)),
      ),
    );
    this.ctx.stats.heartbeatsRefused += tasks.filter((t) => !held.has(t.taskId)).length;
    for (const t of tasks)
      if (!held.has(t.taskId)) await this.ctx.extensions.slots.release(t.taskId, t.attempt);
    return {
      held: tasks.filter((t) => held.has(t.taskId)).map((t) => t.taskId),
      lost: tasks.filter((t) => !held.has(t.taskId)).map((t) => t.taskId),
    };
  }
}

function checkTypes(types: readonly string[]): void {
  if (types.length === 0) throw new WeftError('bad_request', 'name at least one task type to poll for', 400);
}

function isDatabaseError(e: unknown): boolean {
  return (
    typeof (e as { code?: unknown })?.code === 'string' && /^[0-9A-Z]{5}$/.test((e as { code: string }).code)
  );
}
