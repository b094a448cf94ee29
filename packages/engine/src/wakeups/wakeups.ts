import type { Wakeup } from '../store/store.js';
import { HistoryFeed } from './history-feed.js';
import { RunEndings } from './run-endings.js';
import { WaitingPolls } from './waiting-polls.js';

/**
 * In-process wake-ups: for worker polls waiting here (see WaitingPolls) and for the background loops. A wake-up
 * is only a hint to look again; losing one costs latency (a poll timeout or loop interval), never work.
 */
export class Wakeups {
  readonly polls = new WaitingPolls();
  /** Live history readers in this process. */
  readonly history = new HistoryFeed();
  /** Runs that ended, for whoever awaits their results in this process. */
  readonly ended = new RunEndings();
  private readonly listeners = new Map<Wakeup['kind'], Set<() => void>>();

  /** Calls `fn` on every wake-up of a kind; returns a function that stops. */
  on(kind: Wakeup['kind'], fn: () => void): () => void {
    let set = this.listeners.get(kind);
    if (!set) {
      set = new Set();
      this.listeners.set(kind, set);
    }
    set.add(fn);
    return () => set.delete(fn);
  }

  private remote: ((wakeups: Wakeup[]) => void) | null = null;
  private outgoing: Wakeup[] = [];
  private timer: NodeJS.Timeout | null = null;

  /**
   * Sends wake-ups to other processes too, through `send`: at most once every `intervalMs`, merged. A
   * wake-up is a hint, so it needs no transaction: it goes after the commit it announces, and batching
   * keeps it off the hot path (one NOTIFY per few milliseconds instead of one per transaction).
   */
  connect(send: (wakeups: Wakeup[]) => void, intervalMs = 2): void {
    this.remote = (wakeups) => {
      this.outgoing.push(...wakeups);
      if (this.timer) return;
      this.timer = setTimeout(() => {
        this.timer = null;
        const batch = merge(this.outgoing);
        this.outgoing = [];
        if (batch.length > 0) send(batch);
      }, intervalMs);
      this.timer.unref();
    };
  }

  /** Stops sending to other processes (pending wake-ups are dropped: they were hints). */
  disconnect(): void {
    this.remote = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.outgoing = [];
  }

  /** Delivers wake-ups here and, when connected, to other processes. */
  announce(wakeups: readonly Wakeup[]): void {
    if (wakeups.length === 0) return;
    for (const w of wakeups) this.publish(w);
    this.remote?.([...wakeups]);
  }

  /** Delivers a wake-up to whoever waits for it in this process. */
  publish(wakeup: Wakeup): void {
    if (wakeup.kind === 'tasks') {
      this.polls.wake(wakeup.namespace, wakeup.taskTypes);
      return;
    }
    if (wakeup.kind === 'gates') {
      this.polls.wakeAll(wakeup.namespace);
      return;
    }
    if (wakeup.kind === 'ended') {
      this.ended.notify(wakeup.runIds);
      return;
    }
    for (const fn of this.listeners.get(wakeup.kind) ?? []) fn();
  }
}

/**
 * Run ids in one `ended` wake-up: a PostgreSQL notification carries under 8,000 bytes, and a run id with
 * its quotes and comma takes 39.
 */
const ENDED_PER_WAKEUP = 150;

/** Merges wake-ups: one per kind, task types united per namespace, ended runs in a few wake-ups. */
function merge(wakeups: readonly Wakeup[]): Wakeup[] {
  const types = new Map<string, Set<string>>();
  const kinds = new Set<Wakeup['kind']>();
  const gates = new Set<string>();
  const ended = new Set<string>();
  for (const w of wakeups) {
    if (w.kind === 'gates') gates.add(w.namespace);
    else if (w.kind === 'ended') for (const id of w.runIds) ended.add(id);
    else if (w.kind === 'tasks') {
      let set = types.get(w.namespace);
      if (!set) {
        set = new Set();
        types.set(w.namespace, set);
      }
      for (const t of w.taskTypes) set.add(t);
    } else kinds.add(w.kind);
  }
  return [
    ...[...types].map(([namespace, set]): Wakeup => ({ kind: 'tasks', namespace, taskTypes: [...set] })),
    ...[...kinds].map((kind) => ({ kind }) as Wakeup),
    ...[...gates].map((namespace): Wakeup => ({ kind: 'gates', namespace })),
    ...chunks([...ended], ENDED_PER_WAKEUP).map((runIds): Wakeup => ({ kind: 'ended', runIds })),
  ];
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
