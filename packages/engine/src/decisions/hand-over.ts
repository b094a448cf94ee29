import { randomUUID } from 'node:crypto';
import { isSystemTaskType, taskIdempotencyKey, taskKey } from '@weft/core';
import type { Dispatcher } from '../dispatch/dispatcher.js';
import { ANY_NAMESPACE } from '../store/namespaces.js';
import type { LeasedTask, LockedRun } from '../store/records.js';
import type { Wakeup } from '../store/store.js';
import type { NewTaskRow, QueueRow, TaskUpdateRow, WriteSet } from '../store/write-set.js';
import type { EngineStats } from '../support/stats.js';
import type { Reservation, WaitingPolls } from '../wakeups/waiting-polls.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A worker's free capacity offered to a pass: tasks it decides may go straight to that worker. */
export interface EagerSlot {
  readonly worker: string;
  readonly namespace: string;
  readonly taskTypes: ReadonlySet<string>;
  readonly max: number;
  readonly leaseMs: number;
}

/**
 * What a pass needs to know about limits: the gates a node's tasks take (from its definition), and which
 * task types are capped. A gated task always goes through the queue, whose lease path counts it.
 */
export interface Gating {
  gatesOf(run: LockedRun, nodeId: string, limitKey?: string): Readonly<Record<string, number>> | null;
  isCapped(namespace: string, taskType: string): boolean;
}

/**
 * Where one pass's queued tasks go: straight to a worker (the reporting worker's eager slot, or a poll
 * waiting in this process), or to the dispatcher. A task under a limit, or behind a queued task of higher
 * priority, is never handed over directly. After commit it answers the polls it filled and says which
 * polls to wake.
 */
export class TaskHandOver {
  /** Tasks leased to the reporting worker by this pass. */
  readonly leased: LeasedTask[] = [];
  /** Tasks handed to waiting polls by this pass (known after commit). */
  handedOver = 0;
  /**
   * The highest queued priority per task type of the eager slot, when known: a task of lower priority
   * goes to the queue instead of straight to the worker, so queued tasks of higher priority go first.
   */
  priorityFloor: ReadonlyMap<string, number> | null = null;
  private readonly toDispatch: QueueRow[] = [];
  private readonly wakeTypes = new Map<string, Set<string>>();
  private readonly reservations: Reservation[] = [];

  constructor(
    private readonly eager: EagerSlot | null,
    private readonly polls: {
      readonly polls: WaitingPolls;
      readonly leaseMs: number;
      readonly stats?: EngineStats;
    } | null,
    private readonly gating: Gating | null,
  ) {}

  /**
   * Gives the tasks that go to the queue to the dispatcher: Weft's own dispatchers add rows to the write
   * set; for a queue dispatcher, tasks the engine runs itself and tasks under limits go on the table queue
   * (only its gated lease path counts limits) and the rest are returned, to be sent by the pass.
   */
  enqueue(dispatcher: Dispatcher, writes: WriteSet): QueueRow[] {
    if (dispatcher.kind === 'rows') {
      dispatcher.addRows(writes, this.toDispatch);
      return [];
    }
    const external: QueueRow[] = [];
    for (const task of this.toDispatch) {
      const onTable =
        isSystemTaskType(task.taskType) ||
        task.capped === true ||
        (task.gates !== undefined && task.gates !== null);
      if (onTable) writes.queue.push(task);
      else external.push(task);
    }
    return external;
  }

  /** The gates a node's tasks take, if the pass knows about limits. */
  gatesOf(run: LockedRun, nodeId: string, limitKey?: string): Readonly<Record<string, number>> | null {
    return this.gating?.gatesOf(run, nodeId, limitKey) ?? null;
  }

  /**
   * Takes back what was handed out for node instances whose insert was absorbed (`gone` holds
   * `run/key/attempt`): the workers must not get them.
   */
  dropAbsorbed(gone: ReadonlySet<string>): void {
    for (let i = this.leased.length - 1; i >= 0; i--) {
      const t = this.leased[i]!;
      if (gone.has(`${t.runId}/${taskKey(t.nodeId, t.iteration)}/${t.attempt}`)) this.leased.splice(i, 1);
    }
    for (const r of this.reservations) {
      const t = r.filled;
      if (t && gone.has(`${t.runId}/${taskKey(t.nodeId, t.iteration)}/${t.attempt}`)) r.clear();
    }
  }

  /**
   * The run's open work is being cancelled in this pass: tasks this pass handed straight to a worker are
   * cancelled with it, so the worker must not get them (it would run a task of a stopped run).
   */
  withdraw(runId: string): void {
    for (let i = this.leased.length - 1; i >= 0; i--)
      if (this.leased[i]!.runId === runId) this.leased.splice(i, 1);
    for (const r of this.reservations) if (r.filled?.runId === runId) r.clear();
  }

  /** Once the transaction has committed: answers polls that were handed tasks. */
  deliver(): void {
    this.handedOver = this.reservations.filter((r) => r.filled !== null).length;
    const stats = this.polls?.stats;
    if (stats) {
      stats.leasedByHandover += this.handedOver;
      // Leased in the transaction that created them: no wait, by the database's clock.
      for (const t of [...this.leased, ...this.reservations.flatMap((r) => (r.filled ? [r.filled] : []))])
        stats.meter.taskLeased(t.taskType, 0, t.attempt === 1 ? 0 : null);
    }
    for (const r of this.reservations) r.deliver();
    this.reservations.length = 0;
  }

  /** When the transaction did not commit: gives back the poll slots this pass reserved. */
  release(): void {
    for (const r of this.reservations) r.release();
    this.reservations.length = 0;
  }

  /** Polls to wake for the tasks queued by this pass. */
  wakeups(): Wakeup[] {
    return [...this.wakeTypes].map(([namespace, types]) => ({
      kind: 'tasks',
      namespace,
      taskTypes: [...types],
    }));
  }

  /** A row that became queued goes straight to the reporting worker if it has room, else on the queue. */
  dispatchRow(
    run: LockedRun,
    row: Mutable<NewTaskRow> | Mutable<TaskUpdateRow>,
    id: string,
    dispatch: {
      taskType: string;
      priority: number;
      timeoutMs: number | null;
      delayMs?: number;
      limitKey?: string;
    },
  ): void {
    const gating = this.gating;
    const delayMs = dispatch.delayMs ?? 0;
    if (delayMs > 0) {
      // Held back (a retry's backoff on the dispatcher): never handed straight to a worker.
      if (!('expect' in row)) row.delayMs = delayMs;
      this.queue(run, id, row.attempt, dispatch, gating?.gatesOf(run, row.nodeId, dispatch.limitKey) ?? null);
      return;
    }
    const gates = gating?.gatesOf(run, row.nodeId, dispatch.limitKey) ?? null;
    // A task under a limit is never handed over directly: only the lease path counts it against the limit.
    const gated = gates !== null || (gating?.isCapped(run.namespace, dispatch.taskType) ?? false);
    const behind = (this.priorityFloor?.get(dispatch.taskType) ?? dispatch.priority) > dispatch.priority;
    const lease =
      gated || behind
        ? null
        : this.offer(run, id, row.nodeId, row.iteration, row.attempt, dispatch, row.input ?? null);
    if (lease) {
      row.status = 'running';
      row.lease = lease;
    } else {
      this.queue(run, id, row.attempt, dispatch, gates);
    }
  }

  queue(
    run: LockedRun,
    taskId: string,
    attempt: number,
    dispatch: { taskType: string; priority: number; delayMs?: number },
    gates: Readonly<Record<string, number>> | null,
  ): void {
    const capped = this.gating?.isCapped(run.namespace, dispatch.taskType) ?? false;
    this.toDispatch.push({
      taskId,
      runId: run.id,
      attempt,
      namespace: run.namespace,
      taskType: dispatch.taskType,
      priority: dispatch.priority,
      delayMs: dispatch.delayMs ?? 0,
      ...(gates ? { gates } : {}),
      ...(capped ? { capped } : {}),
    });
    let types = this.wakeTypes.get(run.namespace);
    if (!types) {
      types = new Set();
      this.wakeTypes.set(run.namespace, types);
    }
    types.add(dispatch.taskType);
  }

  /**
   * Gives a task straight to a worker: the one whose report this pass handles, if it has room and the
   * type, else a poll waiting in this process. Returns the lease to write with the task, or null.
   */
  private offer(
    run: LockedRun,
    id: string,
    nodeId: string,
    iteration: string,
    attempt: number,
    dispatch: { taskType: string; timeoutMs: number | null },
    input: LeasedTask['input'],
  ): { worker: string; token: string; leaseMs: number } | null {
    const slot = this.eager;
    const eager =
      slot !== null &&
      this.leased.length < slot.max &&
      // The server's own runner (ANY_NAMESPACE) takes its types in every namespace, as its poll does; its
      // floor is then read across namespaces (test: "a report does not hand over a system task past a
      // queued one of higher priority in another namespace").
      (slot.namespace === run.namespace || slot.namespace === ANY_NAMESPACE) &&
      slot.taskTypes.has(dispatch.taskType);
    const reservation = eager ? null : (this.polls?.polls.reserve(run.namespace, dispatch.taskType) ?? null);
    if (!eager && !reservation) return null;
    const worker = eager ? slot!.worker : reservation!.worker;
    const leaseMs = eager ? slot!.leaseMs : this.polls!.leaseMs;
    const token = randomUUID();
    const now = run.now.getTime();
    const deadline = dispatch.timeoutMs === null ? null : now + dispatch.timeoutMs;
    const task: LeasedTask = {
      id,
      runId: run.id,
      nodeId,
      iteration,
      attempt,
      taskType: dispatch.taskType,
      input,
      leaseToken: token,
      leaseExpiresAt: new Date(Math.min(now + leaseMs, deadline ?? Number.POSITIVE_INFINITY)),
      deadlineAt: deadline === null ? null : new Date(deadline),
      definitionName: run.definitionName,
      idempotencyKey: taskIdempotencyKey(run.id, nodeId, iteration),
      traceContext: run.traceContext ?? null,
    };
    if (reservation) {
      reservation.fill(task);
      this.reservations.push(reservation);
    } else {
      this.leased.push(task);
    }
    return { worker, token, leaseMs };
  }
}
