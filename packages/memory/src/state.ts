import type { Json, RunStatus, TaskStatus, TimerPurpose } from '@weft/core';
import type {
  HumanTaskRecord,
  LimitKind,
  OutboxPayload,
  RunFork,
  RunParent,
  RunProgress,
  ScheduleRecord,
} from '@weft/engine';
import { type Index, type Journal, Table } from './table.js';

/**
 * JSON as stored: text, like a jsonb column. Values are encoded when written and decoded when read, so
 * a caller that changes an object it wrote or read never changes what is stored.
 */
export type JsonText = string | null;

/** Encodes a JSON value for storage; null and undefined become null (SQL NULL). */
export const enc = (value: unknown): JsonText =>
  value === null || value === undefined ? null : JSON.stringify(value);

/** Decodes a stored JSON value. */
export const dec = <T = Json>(text: JsonText): T | null => (text === null ? null : (JSON.parse(text) as T));

/** Attempt statuses after which an attempt never changes again. */
export const FINAL: ReadonlySet<TaskStatus> = new Set([
  'completed',
  'failed',
  'timed_out',
  'cancelled',
  'skipped',
]);
/** Attempt statuses of unfinished work. */
export const OPEN: ReadonlySet<TaskStatus> = new Set(['waiting', 'queued', 'running']);

/** A deployed definition version (the definition as JSON text). */
export interface DefinitionRow {
  readonly id: string;
  readonly namespace: string;
  readonly name: string;
  readonly version: number;
  readonly hash: string;
  readonly source: string;
  readonly definition: string;
  readonly createdAt: Date;
}

/** A run. */
export interface RunRow {
  readonly id: string;
  readonly namespace: string;
  readonly definitionId: string;
  readonly definitionName: string;
  readonly definitionVersion: number;
  readonly status: RunStatus;
  readonly input: JsonText;
  readonly output: JsonText;
  readonly error: JsonText;
  readonly vars: string;
  /** Search attributes, as JSON text of an object. */
  readonly attributes: string;
  readonly sinksDone: number;
  readonly createdAt: Date;
  readonly finishedAt: Date | null;
  readonly parent: RunParent | null;
  /** Steps known, completed, failed and running; none yet when absent. */
  readonly progress?: RunProgress;
  /** The W3C traceparent of the span that started the run. */
  readonly traceContext: string | null;
}

/** One attempt of one node instance. */
export interface TaskRow {
  readonly runId: string;
  readonly id: string;
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
  readonly status: TaskStatus;
  readonly taskType: string | null;
  readonly priority: number;
  readonly timeoutMs: number | null;
  readonly input: JsonText;
  readonly output: JsonText;
  readonly error: JsonText;
  readonly arrivals: JsonText;
  readonly worker: string | null;
  readonly leaseToken: string | null;
  readonly leaseExpiresAt: Date | null;
  readonly deadlineAt: Date | null;
  readonly createdAt: Date;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  readonly childRunId: string | null;
  /** Not before this (a retry held back by a queue dispatcher); null when queued without a delay. */
  readonly retryAt: Date | null;
}

/** A wake-up for a queued task (the table queue); duplicates are harmless. */
export interface QueueEntry {
  readonly id: number;
  readonly taskId: string;
  readonly runId: string;
  readonly namespace: string;
  readonly taskType: string;
  readonly priority: number;
  readonly availableAt: Date;
  readonly gates: Readonly<Record<string, number>> | null;
}

/** A pending decision of a run: one per run. */
export interface DecideRow {
  readonly runId: string;
  readonly reason: string;
  readonly requestedAt: Date;
  readonly notBefore: Date;
  readonly failures: number;
  readonly lastError: string | null;
}

/** An event waiting for the next decision of its run. */
export interface InboxRow {
  readonly runId: string;
  readonly id: number;
  readonly event: string;
}

/** A durable timer. */
export interface TimerEntry {
  readonly runId: string;
  readonly id: string;
  readonly dueAt: Date;
  readonly purpose: TimerPurpose;
}

/** One event of a run's history. */
export interface HistoryEntry {
  readonly seq: number;
  readonly type: string;
  readonly nodeId: string | null;
  readonly iteration: string | null;
  readonly attempt: number | null;
  readonly data: JsonText;
  readonly at: Date;
}

/** A signal mailbox with something in it. */
export interface MailboxEntry {
  readonly runId: string;
  readonly name: string;
  readonly correlation: string;
  readonly buffered: string;
  readonly waiters: string;
}

/** An effect waiting for delivery, or a dead letter. */
export interface OutboxEntry {
  readonly runId: string;
  readonly id: number;
  readonly namespace: string;
  readonly taskId: string | null;
  readonly destination: string;
  readonly messageId: string;
  readonly payload: string;
  readonly kind: OutboxPayload['kind'];
  readonly status: 'pending' | 'dead';
  readonly attempts: number;
  readonly nextAttemptAt: Date;
  readonly lastError: string | null;
  readonly createdAt: Date;
  readonly deadAt: Date | null;
}

/** An idempotency key and the run it started. */
export interface IdempotencyRow {
  readonly namespace: string;
  readonly key: string;
  readonly runId: string;
  readonly definitionName: string;
}

/** A limit of a namespace. */
export interface LimitRow {
  readonly namespace: string;
  readonly kind: LimitKind;
  readonly name: string;
  readonly max: number;
  readonly windowMs: number | null;
  readonly updatedAt: Date;
}

/** What a leased attempt takes from a limit (a slot, permits, a rate-limited start). */
export interface HoldRow {
  readonly gate: string;
  readonly runId: string;
  readonly taskId: string;
  readonly attempt: number;
  readonly amount: number;
  readonly takenAt: Date;
}

/** The inbox row of a human task: its record with JSON kept as text (the input is read from the attempt). */
export type HumanRow = Omit<HumanTaskRecord, 'form' | 'data' | 'input'> & {
  readonly form: JsonText;
  readonly data: JsonText;
};

/** A schedule, its input kept as text. */
export type ScheduleRow = Omit<ScheduleRecord, 'input'> & { readonly input: JsonText };

/** Key of a row by several columns (none of which contains the separator). */
export const key = (...parts: (string | number)[]): string => parts.join('\u0000');

/** Every table of the in-memory store, with the indexes its operations read through. */
export class MemoryState {
  readonly definitions = new Table<string, DefinitionRow>();
  readonly definitionsByName = this.definitions.index((d) => key(d.namespace, d.name));
  readonly runs = new Table<string, RunRow>();
  /** Tasks by `key(runId, id)`. */
  readonly tasks = new Table<string, TaskRow>();
  readonly tasksByRun = this.tasks.index((t) => t.runId);
  /** Attempts of one node instance: `key(runId, nodeId, iteration)`. */
  readonly tasksByInstance = this.tasks.index((t) => key(t.runId, t.nodeId, t.iteration));
  readonly runningTasks = this.tasks.index((t) => (t.status === 'running' ? 'running' : null));
  readonly queue = new Table<number, QueueEntry>();
  /** Queue rows by `key(namespace, taskType)`. */
  readonly queueByType: Index<number, QueueEntry> = this.queue.index((q) => key(q.namespace, q.taskType));
  readonly decideQueue = new Table<string, DecideRow>();
  /** Inbox events by `key(runId, id)`. */
  readonly inbox = new Table<string, InboxRow>();
  readonly inboxByRun = this.inbox.index((i) => i.runId);
  /** Timers by `key(runId, id)`. */
  readonly timers = new Table<string, TimerEntry>();
  readonly timersByRun = this.timers.index((t) => t.runId);
  /** Each run's history, by seq - 1; appended only under the run's lock. */
  readonly history = new Map<string, HistoryEntry[]>();
  readonly mailboxes = new Table<string, MailboxEntry>();
  readonly mailboxesByRun = this.mailboxes.index((m) => m.runId);
  readonly outbox = new Table<number, OutboxEntry>();
  readonly startKeys = new Table<string, string>();
  readonly idempotencyKeys = new Table<string, IdempotencyRow>();
  readonly limits = new Table<string, LimitRow>();
  /** Holds by `key(gate, runId, taskId, attempt)`. */
  readonly holds = new Table<string, HoldRow>();
  readonly holdsByGate = this.holds.index((h) => h.gate);
  /** Human tasks by task id. */
  readonly humanTasks = new Table<string, HumanRow>();
  readonly schedules = new Table<string, ScheduleRow>();
  /** Forked runs by run id, and by the run they were forked from. */
  readonly forks = new Table<string, RunFork>();
  readonly forksBySource = this.forks.index((f) => f.forkedFrom);

  private sequences = { definition: 0, queue: 0, inbox: 0, outbox: 0 };

  /** The next value of a sequence. Like a database sequence, a rollback does not give values back. */
  next(sequence: keyof MemoryState['sequences']): number {
    this.sequences[sequence] += 1;
    return this.sequences[sequence];
  }

  /** A definition's versions of one name; its latest is the one of the highest version. */
  definitionVersions(
    namespace: string,
    name: string,
  ): { all: DefinitionRow[]; latest: DefinitionRow | undefined } {
    const all = this.definitions.pick(this.definitionsByName.keys(key(namespace, name)));
    let latest: DefinitionRow | undefined;
    for (const d of all) if (!latest || d.version > latest.version) latest = d;
    return { all, latest };
  }

  /** The run's last history sequence number (its highest). */
  lastSeq(runId: string): number {
    return this.history.get(runId)?.at(-1)?.seq ?? 0;
  }

  /** Appends a history event, kept in seq order; a seq the run already has is refused, like a primary key. */
  appendHistory(journal: Journal | null, runId: string, entry: HistoryEntry): void {
    let list = this.history.get(runId);
    if (!list) {
      list = [];
      this.history.set(runId, list);
    }
    const events = list;
    let at = events.length;
    while (at > 0 && events[at - 1]!.seq >= entry.seq) {
      if (events[at - 1]!.seq === entry.seq)
        throw Object.assign(
          new Error(`history of run ${runId} has event ${entry.seq} already: a duplicate sequence number`),
          { code: '23505' },
        );
      at--;
    }
    events.splice(at, 0, entry);
    journal?.record(() => {
      const i = events.indexOf(entry);
      if (i >= 0) events.splice(i, 1);
    });
  }
}
