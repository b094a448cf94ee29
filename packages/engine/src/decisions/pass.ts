import { type Action, isTerminalRun, taskKey, type Workflow } from '@weft/core';
import type { Dispatcher } from '../dispatch/dispatcher.js';
import { BlobUses } from '../payloads/blob-uses.js';
import { offloadWrites } from '../payloads/offload-writes.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { LeasedTask, LockedRun } from '../store/records.js';
import type { StoreTx, Wakeup } from '../store/store.js';
import { emptyWriteSet, type RunUpdateRow, type WriteSet } from '../store/write-set.js';
import { fault, isArmed } from '../support/faults.js';
import type { EngineStats } from '../support/stats.js';
import type { WaitingPolls } from '../wakeups/waiting-polls.js';
import type { Wakeups } from '../wakeups/wakeups.js';
import type { ActionScope } from './actions/action-scope.js';
import { writeAction } from './actions/action-writers.js';
import { type Cascader, noCascade } from './cascade.js';
import { type EagerSlot, type Gating, TaskHandOver } from './hand-over.js';
import { PassDispatch } from './pass-dispatch.js';
import type { PassEnv } from './pass-env.js';
import { PassReport } from './pass-report.js';

export type { EagerSlot, Gating } from './hand-over.js';

/**
 * One transaction's worth of decisions, turned into writes. Collects the actions of every run decided in
 * the transaction, numbers history events, dispatches queued tasks (or hands them straight to a waiting
 * worker), writes everything in one pipelined round trip and, after commit, wakes whoever waits.
 */
export class Pass {
  readonly writes: WriteSet = emptyWriteSet();
  /** Blob references the pass's rows will hold, guarded before the write commits (invariant 30). */
  readonly blobUses = new BlobUses();
  private readonly runUpdates = new Map<string, RunUpdateRow>();
  private readonly requested = new Set<string>();
  private readonly seqs = new Map<string, number>();
  private readonly handOver: TaskHandOver;
  /** History and finished runs, reported after commit. */
  private readonly report: PassReport;
  /** Tasks for a queue dispatcher (not Weft's own rows). */
  private readonly external: PassDispatch;
  /** Set by `PassRunner.run` when the store and the dispatcher negotiated transactional dispatch. */
  handle: unknown = undefined;
  /** Runs this pass was asked to decide (by `Evaluator.decideRuns`, events or not), for the meter. */
  private decidedRuns = 0;
  /** The runs this pass decided, by id: what its span names and links (see recordDecision). */
  readonly decided = new Map<string, LockedRun>();

  /**
   * `eager` is the reporting worker's free capacity, if any; `polls` are the polls waiting in this
   * process, which may take tasks the eager slot has no room for.
   */
  constructor(
    private readonly dispatcher: Dispatcher,
    eager: EagerSlot | null = null,
    polls: {
      readonly polls: WaitingPolls;
      readonly leaseMs: number;
      readonly stats?: EngineStats;
    } | null = null,
    private readonly cascader: Cascader = noCascade,
    private readonly services: { readonly gating: Gating; readonly payloads: PayloadStore } | null = null,
    private readonly env: PassEnv | null = null,
  ) {
    this.handOver = new TaskHandOver(eager, polls, services?.gating ?? null);
    this.report = new PassReport(env?.extensions ?? null, env?.meter);
    this.external = new PassDispatch(dispatcher);
  }

  /** Tasks leased to the reporting worker by this pass. */
  get leased(): LeasedTask[] {
    return this.handOver.leased;
  }

  /** Tasks handed to waiting polls by this pass (known after commit). */
  get handedOver(): number {
    return this.handOver.handedOver;
  }

  /** The highest queued priority per task type of the eager slot (see TaskHandOver). */
  set priorityFloor(floor: ReadonlyMap<string, number> | null) {
    this.handOver.priorityFloor = floor;
  }

  /**
   * Turns one run's actions into writes, each through the writer of its kind (see ACTION_WRITERS).
   * `loadedIds` maps loaded node instances to their task row ids; `workflow` is the run's definition
   * (for its status callback).
   */
  addActions(
    run: LockedRun,
    actions: readonly Action[],
    loadedIds: ReadonlyMap<string, string>,
    workflow?: Workflow,
  ): void {
    this.decided.set(run.id, run);
    const scope: ActionScope = {
      run,
      workflow,
      writes: this.writes,
      // Ids of rows loaded for the decision, and of rows this pass creates (a join created and then fired
      // by two events of one pass is updated by id like any other).
      ids: new Map(loadedIds),
      touched: new Map(),
      handOver: this.handOver,
      humanTaskSinks: this.env?.humanTaskSinks ?? null,
      report: this.report,
      seq: this.seqs.get(run.id) ?? run.lastSeq,
      updateRun: (change) => this.updateRun(run.id, change),
      runUpdate: () => this.runUpdates.get(run.id),
      requestDecision: () => this.requested.add(run.id),
    };
    for (const action of actions) writeAction(scope, action);
    this.seqs.set(run.id, scope.seq);
  }

  /** Notes runs handed to the evaluator in this pass, whether or not they had events to decide. */
  countDecided(runs: number): void {
    this.decidedRuns += runs;
  }

  /** True when this pass decided runs (a decision with no event to decide included). */
  get decidedAny(): boolean {
    return this.decidedRuns > 0;
  }

  /**
   * True when the pass changed a run: wrote a history event, a task, a run's row or a timer. A decision that
   * changed nothing was not needed (a duplicate wake-up); a sustained rate of them is worth a look.
   */
  get changed(): boolean {
    const w = this.writes;
    return (
      w.history.length > 0 ||
      w.newTasks.length > 0 ||
      w.taskUpdates.length > 0 ||
      w.runUpdates.length > 0 ||
      w.timers.length > 0 ||
      w.outbox.length > 0
    );
  }

  /** Asks for another decision on a run after this transaction (for example after an absorbed insert). */
  requestDecision(runId: string): void {
    this.requested.add(runId);
  }

  /**
   * Writes the pass and commits, in one round trip: dispatch, every write pipelined, the commit after them. A
   * run whose task insert was absorbed is asked for another decision by the insert itself (invariant 4: one
   * extra pass sees the true state); its task is taken out of what the workers get.
   */
  async finish(tx: StoreTx, options: { readonly commit?: boolean } = {}): Promise<void> {
    this.writes.runUpdates.push(...this.runUpdates.values());
    this.writes.decisionRequests.push(...this.requested);
    this.external.set(this.handOver.enqueue(this.dispatcher, this.writes));
    // Before the write, which commits: the cascade's writes belong to this transaction.
    if (this.writes.cancelOpenWork.length > 0)
      await this.cascader.stop(tx, this.writes, this.writes.cancelOpenWork);
    // Large values go to the blob store before the write; outbox rows keep theirs (see offloadWrites).
    if (this.services) {
      await offloadWrites(this.services.payloads, this.writes, this.blobUses);
      // Large payloads only: recorded and checked under their keys' locks before the commit (invariant 30).
      await this.blobUses.guard(tx, this.services.payloads);
    }
    // Without `commit` (the relay marks its rows after this) or with the test fault point armed, the writes
    // are sent and the transaction is left open; the caller's transaction commits it. A dispatcher that joins
    // the transaction enqueues after the write and before the commit, so the tasks and their messages commit
    // together (test: "commits each task with its job, and a rolled-back transaction leaves no job").
    const joining = this.handle !== undefined && this.external.pending;
    const hold = options.commit === false || isArmed('pass.after-write') || joining;
    const { absorbed } = await tx.write(this.writes, { commit: !hold });
    if (absorbed.length > 0) {
      const gone = new Set(absorbed.map((a) => `${a.runId}/${taskKey(a.nodeId, a.iteration)}/${a.attempt}`));
      this.handOver.dropAbsorbed(gone);
      for (const a of absorbed) this.requested.add(a.runId);
      this.external.dropAbsorbed(gone, this.writes.newTasks);
    }
    if (joining) await this.external.sendIn(this.handle);
    if (hold) await fault('pass.after-write');
  }

  /**
   * Once the transaction has committed: answers polls that were handed tasks, wakes the others, sends the
   * messages of a dispatcher that enqueues after commit, and reports to observers. A failed enqueue is
   * logged: the engine's repair sends the message again (see Redispatcher).
   */
  async afterCommit(wakeups: Wakeups): Promise<void> {
    this.handOver.deliver();
    wakeups.announce(this.wakeups());
    if (this.writes.history.length > 0)
      wakeups.history.notify(new Set(this.writes.history.map((h) => h.runId)));
    await this.external.sendAfterCommit(this.env?.logger ?? null);
    await this.report.committed();
  }

  /** When the transaction did not commit: gives back the poll slots this pass reserved. */
  release(): void {
    this.handOver.release();
  }

  /** True when the pass asked for more decisions, which a background loop should pick up. */
  get wantsDecisions(): boolean {
    return this.requested.size > 0;
  }

  private wakeups(): Wakeup[] {
    const out: Wakeup[] = this.handOver.wakeups();
    if (this.requested.size > 0) out.push({ kind: 'decisions' });
    if (this.writes.outbox.length > 0) out.push({ kind: 'outbox' });
    // Sent after the commit, so whoever it wakes reads the run ended (invariant 31; test: "a run finished by
    // another engine on the same database wakes result() in this one").
    const ended = this.writes.runUpdates
      .filter((u) => u.status && isTerminalRun(u.status))
      .map((u) => u.runId);
    if (ended.length > 0) out.push({ kind: 'ended', runIds: ended });
    return out;
  }

  private updateRun(runId: string, change: Omit<RunUpdateRow, 'runId'>): void {
    this.runUpdates.set(runId, { ...this.runUpdates.get(runId), ...change, runId });
  }
}
