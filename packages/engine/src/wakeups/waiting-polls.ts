import { ANY_NAMESPACE } from '../store/namespaces.js';
import type { LeasedTask } from '../store/records.js';

function sameNamespace(polled: string, task: string): boolean {
  return polled === task || polled === ANY_NAMESPACE;
}

/** Why a waiting poll woke: tasks were handed to it, or something may be on the queue. */
export type PollWake = 'tasks' | 'look';

interface Entry {
  readonly namespace: string;
  readonly worker: string;
  readonly types: ReadonlySet<string>;
  readonly max: number;
  readonly signal: AbortSignal | undefined;
  /** A paused poll is looking at the queue itself: it takes no hand-overs, but a wake-up still counts. */
  paused: boolean;
  /** Slots promised to transactions that have not committed yet. */
  reserved: number;
  handed: LeasedTask[];
  woken: PollWake | null;
  closing: boolean;
  wake: (why: PollWake) => void;
  drained: (() => void) | null;
}

/** A worker's poll waiting in this process. */
export interface WaitingPoll {
  /** Resolves when the poll should act: tasks were handed to it, or the queue may have some. */
  readonly woken: Promise<PollWake>;
  /** Starts taking hand-overs; false when a wake-up arrived meanwhile (look at the queue again). */
  resume(): boolean;
  /**
   * Stops waiting and returns the tasks handed to this poll, first waiting for any transaction that has
   * promised it a task to commit or roll back. Call it in every case.
   */
  close(): Promise<LeasedTask[]>;
}

/**
 * The worker polls waiting in this process. A transaction that queues a task can hand it straight to one
 * of them: it reserves a slot here, inserts the task already leased to that worker, and after commit the
 * poll answers with the task. That saves the poll's own lease transaction and a round trip. The
 * reservations of a transaction that rolls back are released; a hand-over is never visible before commit.
 */
export class WaitingPolls {
  private readonly waiting = new Set<Entry>();

  /** Registers a poll, paused, before it looks at the queue: nothing queued in between is missed. */
  register(spec: {
    namespace: string;
    worker: string;
    taskTypes: readonly string[];
    max: number;
    signal?: AbortSignal;
  }): WaitingPoll {
    let wake!: (why: PollWake) => void;
    const woken = new Promise<PollWake>((resolve) => {
      wake = resolve;
    });
    const entry: Entry = {
      namespace: spec.namespace,
      worker: spec.worker,
      types: new Set(spec.taskTypes),
      max: spec.max,
      signal: spec.signal,
      paused: true,
      reserved: 0,
      handed: [],
      woken: null,
      closing: false,
      drained: null,
      wake: (why) => {
        if (entry.woken) return;
        entry.woken = why;
        wake(why);
      },
    };
    this.waiting.add(entry);
    return {
      woken,
      resume: () => {
        if (entry.woken) return false;
        entry.paused = false;
        return true;
      },
      close: async () => {
        entry.closing = true;
        this.waiting.delete(entry);
        if (entry.reserved > 0) await new Promise<void>((resolve) => (entry.drained = resolve));
        return entry.handed;
      },
    };
  }

  /**
   * Reserves one slot of a waiting poll for a task of this type, or returns null. Polls are taken in
   * turn, so that several waiting workers share the work.
   */
  reserve(namespace: string, taskType: string): Reservation | null {
    for (const entry of this.waiting) {
      if (entry.paused || entry.closing || entry.woken === 'look') continue;
      if (!sameNamespace(entry.namespace, namespace) || !entry.types.has(taskType)) continue;
      if (entry.reserved + entry.handed.length >= entry.max || entry.signal?.aborted) continue;
      entry.reserved++;
      // Move it to the back: the next task goes to the next poll.
      this.waiting.delete(entry);
      this.waiting.add(entry);
      return new Reservation(entry);
    }
    return null;
  }

  /** Tells polls waiting for these types that the queue may have something for them. */
  wake(namespace: string, taskTypes: readonly string[]): void {
    for (const entry of this.waiting) {
      if (!sameNamespace(entry.namespace, namespace) || entry.reserved > 0 || entry.handed.length > 0)
        continue;
      if (taskTypes.some((t) => entry.types.has(t))) entry.wake('look');
    }
  }

  /** Tells every poll waiting in the namespace to look at the queue again (room was freed under a limit). */
  wakeAll(namespace: string): void {
    for (const entry of this.waiting) {
      if (!sameNamespace(entry.namespace, namespace) || entry.reserved > 0 || entry.handed.length > 0)
        continue;
      entry.wake('look');
    }
  }

  /** How many polls are waiting (for metrics and tests). */
  get size(): number {
    return this.waiting.size;
  }
}

/** A slot of a waiting poll, promised to a task of an uncommitted transaction. */
export class Reservation {
  private taskValue: LeasedTask | null = null;

  constructor(private readonly entry: Entry) {}

  /** The worker the task is leased to. */
  get worker(): string {
    return this.entry.worker;
  }

  /** The task that fills this slot. */
  fill(task: LeasedTask): void {
    this.taskValue = task;
  }

  /** The task in this slot, if any. */
  get filled(): LeasedTask | null {
    return this.taskValue;
  }

  /** Empties the slot (its task was never inserted); the poll gets nothing from it. */
  clear(): void {
    this.taskValue = null;
  }

  /** After commit: the task joins the poll's answer. */
  deliver(): void {
    if (this.taskValue) this.entry.handed.push(this.taskValue);
    this.settle();
  }

  /** After rollback: gives the slot back. */
  release(): void {
    this.settle();
  }

  private settle(): void {
    this.entry.reserved--;
    if (this.entry.reserved > 0) return;
    if (this.entry.closing) this.entry.drained?.();
    else if (this.entry.handed.length > 0) this.entry.wake('tasks');
  }
}
