import { type Action, taskKey, type Workflow } from '@weft/core';
import type { Dispatcher } from '../dispatch/dispatcher.js';
import { offloadWrites } from '../payloads/offload-writes.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import {
  emptyWriteSet,
  type LeasedTask,
  type LockedRun,
  type NewTaskRow,
  type RunUpdateRow,
  type TaskUpdateRow,
  type WriteSet,
} from '../store/records.js';
import type { StoreTx, Wakeup } from '../store/store.js';
import { fault, isArmed } from '../support/faults.js';
import { uuidv7 } from '../support/ids.js';
import type { EngineStats } from '../support/stats.js';
import type { Pollers } from '../wakeups/pollers.js';
import type { Wakeups } from '../wakeups/wakeups.js';
import { type Cascader, noCascade } from './cascade.js';
import { type EagerSlot, type Gating, TaskHandOver } from './hand-over.js';
import { effectRow, finishRows } from './outbox-rows.js';
import { PassDispatch } from './pass-dispatch.js';
import type { PassEnv } from './pass-env.js';
import { PassReport } from './pass-report.js';

export type { EagerSlot, Gating } from './hand-over.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const identity = (a: { nodeId: string; iteration: string; attempt: number }) =>
  `${a.nodeId}\u0000${a.iteration}\u0000${a.attempt}`;

/**
 * One transaction's worth of decisions, turned into writes. Collects the actions of every run decided in
 * the transaction, numbers history events, dispatches queued tasks (or hands them straight to a waiting
 * worker), writes everything in one pipelined round trip and, after commit, wakes whoever waits.
 */
export class Pass {
  readonly writes: WriteSet = emptyWriteSet();
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

  /**
   * `eager` is the reporting worker's free capacity, if any; `pollers` are the polls waiting in this
   * process, which may take tasks the eager slot has no room for.
   */
  constructor(
    private readonly dispatcher: Dispatcher,
    eager: EagerSlot | null = null,
    pollers: {
      readonly pollers: Pollers;
      readonly leaseMs: number;
      readonly stats?: EngineStats;
    } | null = null,
    private readonly cascader: Cascader = noCascade,
    private readonly services: { readonly gating: Gating; readonly payloads: PayloadStore } | null = null,
    private readonly env: PassEnv | null = null,
  ) {
    this.handOver = new TaskHandOver(eager, pollers, services?.gating ?? null);
    this.report = new PassReport(env?.extensions ?? null);
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
   * Turns one run's actions into writes. `ids` maps loaded node instances to their task row ids;
   * `workflow` is the run's definition (for its status callback).
   */
  addActions(
    run: LockedRun,
    actions: readonly Action[],
    loadedIds: ReadonlyMap<string, string>,
    workflow?: Workflow,
  ): void {
    let seq = this.seqs.get(run.id) ?? run.lastSeq;
    // Ids of rows loaded for the decision, and of rows this pass creates (a join created and then fired
    // by two events of one pass is updated by id like any other).
    const ids = new Map(loadedIds);
    const touched = new Map<
      string,
      { kind: 'new'; row: Mutable<NewTaskRow> } | { kind: 'update'; row: Mutable<TaskUpdateRow> }
    >();
    const w = this.writes;
    for (const action of actions) {
      switch (action.kind) {
        case 'create_task': {
          const id = uuidv7(run.now.getTime());
          ids.set(taskKey(action.nodeId, action.iteration), id);
          const row: Mutable<NewTaskRow> = {
            id,
            runId: run.id,
            namespace: run.namespace,
            nodeId: action.nodeId,
            iteration: action.iteration,
            attempt: action.attempt,
            status: action.status,
            taskType: action.dispatch?.taskType ?? null,
            priority: action.dispatch?.priority ?? 0,
            timeoutMs: action.dispatch?.timeoutMs ?? null,
            input: action.input,
            output: action.output,
            error: action.error,
            arrivals: action.arrivals,
            lease: null,
          };
          w.newTasks.push(row);
          touched.set(identity(action), { kind: 'new', row });
          if (action.status === 'queued' && action.dispatch)
            this.handOver.dispatchRow(run, row, id, action.dispatch);
          break;
        }
        case 'update_task': {
          // One statement updates each row at most once, so several changes to one attempt in a pass
          // are merged into a single row (into its insert, if this pass creates it).
          const id = ids.get(taskKey(action.nodeId, action.iteration));
          const dispatch =
            action.status === 'queued' || action.status === 'running' ? (action.dispatch ?? null) : null;
          const prev = touched.get(identity(action));
          const row: Mutable<NewTaskRow> | Mutable<TaskUpdateRow> =
            prev?.row ??
            (() => {
              const fresh: Mutable<TaskUpdateRow> = {
                runId: run.id,
                nodeId: action.nodeId,
                iteration: action.iteration,
                attempt: action.attempt,
                expect: action.expect,
                status: action.status,
                lease: null,
              };
              w.taskUpdates.push(fresh);
              touched.set(identity(action), { kind: 'update', row: fresh });
              return fresh;
            })();
          row.status = action.status;
          if (action.input !== undefined) row.input = action.input;
          if (action.output !== undefined) row.output = action.output;
          if (action.error !== undefined) row.error = action.error;
          if (action.arrivals !== undefined) row.arrivals = action.arrivals;
          if (dispatch) {
            row.taskType = dispatch.taskType;
            row.priority = dispatch.priority;
            row.timeoutMs = dispatch.timeoutMs;
            if (id && action.status === 'queued') this.handOver.dispatchRow(run, row, id, dispatch);
          }
          break;
        }
        case 'effect': {
          // The row is tied to its attempt's task row: if that insert is absorbed, the effect goes too.
          const taskId = action.task
            ? (ids.get(taskKey(action.task.nodeId, action.task.iteration)) ?? null)
            : null;
          if (action.effect.kind === 'start_run' && action.task) {
            const row = touched.get(identity(action.task))?.row;
            if (row) row.childRunId = action.effect.runId;
          }
          w.outbox.push(effectRow(run, action.effect, taskId));
          break;
        }
        case 'set_timer':
          w.timers.push({
            id: uuidv7(run.now.getTime()),
            runId: run.id,
            dueAt: action.dueAt,
            purpose: action.purpose,
          });
          break;
        case 'cancel_open_work':
          w.cancelOpenWork.push({ runId: run.id, reason: action.reason, mode: action.mode ?? 'cancel' });
          this.handOver.withdraw(run.id);
          break;
        case 'finish_run': {
          this.report.finish(run, action);
          this.updateRun(run.id, {
            status: action.status,
            output: action.output,
            error: action.error,
            finished: true,
            reopened: false,
          });
          const announce = finishRows(run, action.status, action.output, action.error, workflow);
          w.inboxAppend.push(...announce.inbox);
          w.outbox.push(...announce.outbox);
          break;
        }
        case 'set_run_status':
          this.updateRun(run.id, {
            status: action.status,
            ...(action.reopen ? { output: null, error: null, finished: false, reopened: true } : {}),
          });
          break;
        case 'dispatch_task': {
          const id = ids.get(taskKey(action.nodeId, action.iteration));
          if (id)
            this.handOver.queue(
              run,
              id,
              action.attempt,
              action.dispatch,
              this.handOver.gatesOf(run, action.nodeId),
            );
          break;
        }
        case 'request_decision':
          // In a transaction that claimed this run's decide-queue row: the same row, so the rule "claim or
          // upsert, never both for different runs" holds.
          this.requested.add(run.id);
          break;
        case 'defer':
          w.inboxAppend.push({ runId: run.id, event: action.event });
          break;
        case 'set_vars':
          this.updateRun(run.id, { vars: { ...this.runUpdates.get(run.id)?.vars, ...action.values } });
          break;
        case 'put_mailbox': {
          // The last state of a mailbox in this pass is the one to store.
          const at = w.mailboxes.findIndex(
            (m) =>
              m.runId === run.id &&
              m.mailbox.name === action.mailbox.name &&
              m.mailbox.correlation === action.mailbox.correlation,
          );
          if (at >= 0) w.mailboxes.splice(at, 1);
          w.mailboxes.push({ runId: run.id, mailbox: action.mailbox });
          break;
        }
        case 'add_sinks_done':
          this.updateRun(run.id, {
            sinksDelta: (this.runUpdates.get(run.id)?.sinksDelta ?? 0) + action.count,
          });
          break;
        case 'open_human_task': {
          const taskId = ids.get(taskKey(action.nodeId, action.iteration));
          if (!taskId) break;
          w.humanTasks.push({
            runId: run.id,
            taskId,
            namespace: run.namespace,
            definition: run.definitionName,
            nodeId: action.nodeId,
            iteration: action.iteration,
            attempt: action.attempt,
            title: action.title,
            description: action.description,
            assignees: action.assignees,
            form: action.form,
            deadlineAt: action.deadlineAt,
          });
          break;
        }
        case 'close_human_task': {
          const taskId = ids.get(taskKey(action.nodeId, action.iteration));
          if (taskId) w.humanTaskCloses.push({ runId: run.id, taskId, state: action.state });
          break;
        }
        case 'record':
          seq += 1;
          w.history.push({
            runId: run.id,
            seq,
            type: action.type,
            nodeId: action.nodeId ?? null,
            iteration: action.iteration ?? null,
            attempt: action.attempt ?? null,
            data: action.data,
          });
          this.report.event(run, w.history.at(-1)!);
          break;
      }
    }
    this.seqs.set(run.id, seq);
  }

  /** Asks for another decision on a run after this transaction (for example after an absorbed insert). */
  requestDecision(runId: string): void {
    this.requested.add(runId);
  }

  /**
   * Writes the pass and commits, in one round trip: dispatch, every write pipelined, the commit after
   * them. A run whose task insert was absorbed is asked for another decision by the insert itself (seed
   * 001: one extra pass sees the true state); its task is taken out of what the workers get.
   */
  async finish(tx: StoreTx, options: { readonly commit?: boolean } = {}): Promise<void> {
    this.writes.runUpdates.push(...this.runUpdates.values());
    this.writes.decisionRequests.push(...this.requested);
    this.external.set(this.handOver.enqueue(this.dispatcher, this.writes));
    // Before the write, which commits: the cascade's writes belong to this transaction.
    if (this.writes.cancelOpenWork.length > 0)
      await this.cascader.stop(tx, this.writes, this.writes.cancelOpenWork);
    // Large values go to the blob store before the write; outbox rows keep theirs (see offloadWrites).
    if (this.services) await offloadWrites(this.services.payloads, this.writes);
    // Without `commit` (the relay marks its rows after this) or with the test fault point armed, the
    // writes are sent and the transaction is left open; the caller's transaction commits it.
    // A dispatcher that joins the transaction enqueues after the write and before the commit, so the
    // tasks and their messages commit together (test: "a rolled-back transaction leaves no job").
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
    return out;
  }

  private updateRun(runId: string, change: Omit<RunUpdateRow, 'runId'>): void {
    this.runUpdates.set(runId, { ...this.runUpdates.get(runId), ...change, runId });
  }
}
