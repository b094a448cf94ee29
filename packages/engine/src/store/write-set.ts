// What one decision pass writes: the rows of its WriteSet, applied by the store in one transaction.
import type {
  Arrival,
  Json,
  JsonObject,
  Mailbox,
  RunAttributes,
  RunError,
  RunEvent,
  RunStatus,
  TaskError,
  TaskStatus,
  TimerPurpose,
} from '@weft/core';
import type { HumanTaskState, NewHumanTaskRow } from './human-records.js';
import type { OutboxWrite } from './outbox-records.js';

/** A new attempt row to insert. `lease` is set when the task goes straight to a waiting worker. */
export interface NewTaskRow {
  readonly id: string;
  readonly runId: string;
  readonly namespace: string;
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
  readonly status: TaskStatus;
  readonly taskType: string | null;
  readonly priority: number;
  readonly timeoutMs: number | null;
  readonly input: Json | null;
  readonly output: Json | null;
  readonly error: TaskError | null;
  readonly arrivals: readonly Arrival[];
  readonly lease: { readonly worker: string; readonly token: string; readonly leaseMs: number } | null;
  /** The run this attempt starts (sub-workflow and start-workflow nodes): what a cancel cascades to. */
  readonly childRunId?: string | null;
  /** A queued attempt held back this long (a retry's backoff on the dispatcher): stored as its `retry_at`. */
  readonly delayMs?: number;
}

/** A change to an existing attempt, applied only while it is still in `expect` status. */
export interface TaskUpdateRow {
  readonly runId: string;
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
  readonly expect: TaskStatus;
  readonly status: TaskStatus;
  readonly input?: Json | null;
  readonly output?: Json | null;
  readonly error?: TaskError | null;
  readonly arrivals?: readonly Arrival[];
  /** Set for an update that makes the task `queued`: its type and priority, for dispatch. */
  readonly taskType?: string | null;
  readonly priority?: number;
  readonly timeoutMs?: number | null;
  readonly lease?: { readonly worker: string; readonly token: string; readonly leaseMs: number } | null;
  readonly childRunId?: string | null;
}

/** A task to put on the queue. */
export interface QueueRow {
  readonly taskId: string;
  readonly runId: string;
  readonly attempt: number;
  readonly namespace: string;
  readonly taskType: string;
  readonly priority: number;
  readonly delayMs: number;
  /** What the task takes from limits besides its type's cap (`{"semaphore:x": 1}`); null or absent: none. */
  readonly gates?: Readonly<Record<string, number>> | null;
  /**
   * True when the task type had a concurrency cap as the server's limit book last saw it. With `gates`, it
   * tells a dispatcher other than the table that the task must stay on the table queue, whose gated lease
   * path is the only one that counts limits.
   */
  readonly capped?: boolean;
}

/** A timer row. */
export interface TimerRow {
  readonly id: string;
  readonly runId: string;
  readonly dueAt: Date;
  readonly purpose: TimerPurpose;
}

/** A history row to append. */
export interface HistoryRow {
  readonly runId: string;
  readonly seq: number;
  readonly type: string;
  readonly nodeId: string | null;
  readonly iteration: string | null;
  readonly attempt: number | null;
  readonly data: Json;
}

/** A signal mailbox of a run as it now is; one with no kept signals and no waiters is deleted. */
export interface MailboxRow {
  readonly runId: string;
  readonly mailbox: Mailbox;
}

/** A change to a run row. */
export interface RunUpdateRow {
  readonly runId: string;
  /** Run variables to set (merged into the existing ones). */
  readonly vars?: JsonObject;
  readonly status?: RunStatus;
  readonly output?: Json | null;
  readonly error?: RunError | null;
  readonly sinksDelta?: number;
  readonly finished?: boolean;
  /** A finished run moves back to running (retry, rerun): its finish time is cleared. */
  readonly reopened?: boolean;
}

/** Everything one pass writes, across the runs it decided for. */
export interface WriteSet {
  readonly newTasks: NewTaskRow[];
  readonly taskUpdates: TaskUpdateRow[];
  readonly cancelOpenWork: {
    readonly runId: string;
    readonly reason: string;
    /** What the run's open work is stopped as, for whatever it started (see Cascader). */
    readonly mode: 'cancel' | 'terminate';
  }[];
  readonly timers: TimerRow[];
  readonly runUpdates: RunUpdateRow[];
  readonly history: HistoryRow[];
  readonly inboxDone: { readonly runId: string; readonly id: string }[];
  readonly inboxAppend: { readonly runId: string; readonly event: RunEvent }[];
  readonly queue: QueueRow[];
  /** Runs that need another decision after this transaction (written with the rest). */
  readonly decisionRequests: string[];
  readonly mailboxes: MailboxRow[];
  /** Human tasks to put in the inbox. */
  readonly humanTasks: NewHumanTaskRow[];
  /** Human tasks leaving the inbox without an answer. */
  readonly humanTaskCloses: {
    readonly runId: string;
    readonly taskId: string;
    readonly state: HumanTaskState;
  }[];
  /** Outbound effects, delivered by the relay after commit (invariant 7: the transactional outbox). */
  readonly outbox: OutboxWrite[];
  /**
   * Runs being stopped whose child runs must stop too: each unfinished attempt that started a child gets
   * a `cancel_run` outbox row (terminate with `mode` terminate), written before the attempts are cancelled.
   */
  readonly stopChildren: {
    readonly runId: string;
    readonly reason: string;
    readonly mode: 'cancel' | 'terminate';
  }[];
  /** Search attributes set on runs (each replaces the run's attribute of its name). */
  readonly attributes: AttributeRow[];
}

/** Search attributes to set on a run. */
export interface AttributeRow {
  readonly runId: string;
  readonly namespace: string;
  readonly values: RunAttributes;
}

/** An empty write set. */
export function emptyWriteSet(): WriteSet {
  return {
    newTasks: [],
    taskUpdates: [],
    cancelOpenWork: [],
    timers: [],
    runUpdates: [],
    history: [],
    inboxDone: [],
    inboxAppend: [],
    queue: [],
    decisionRequests: [],
    mailboxes: [],
    humanTasks: [],
    humanTaskCloses: [],
    outbox: [],
    stopChildren: [],
    attributes: [],
  };
}
