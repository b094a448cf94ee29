import type { Wakeup } from './store.js';

interface Waiter {
  readonly namespace: string;
  readonly types: ReadonlySet<string>;
  readonly wake: () => void;
}

/**
 * In-process wake-ups: workers long-polling for task types, and the background loops. A wake-up is only a
 * hint to look again; losing one costs latency (the poll timeout or loop interval), never correctness.
 */
export class Wakeups {
  private readonly waiters = new Set<Waiter>();
  private readonly listeners = new Map<Wakeup['kind'], Set<() => void>>();

  /**
   * Registers interest in tasks before the caller looks for them, so a task queued between the look and
   * the wait is not missed. Resolve `ready` to wait; always call `cancel`.
   */
  subscribe(namespace: string, taskTypes: readonly string[]): { ready: Promise<void>; cancel: () => void } {
    let wake!: () => void;
    const ready = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const waiter: Waiter = { namespace, types: new Set(taskTypes), wake: () => wake() };
    this.waiters.add(waiter);
    return { ready, cancel: () => this.waiters.delete(waiter) };
  }

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

  /** Delivers a wake-up to whoever waits for it. */
  publish(wakeup: Wakeup): void {
    if (wakeup.kind === 'tasks') {
      let budget = Number.POSITIVE_INFINITY;
      for (const waiter of this.waiters) {
        if (budget <= 0) break;
        if (waiter.namespace !== wakeup.namespace) continue;
        if (!wakeup.taskTypes.some((t) => waiter.types.has(t))) continue;
        this.waiters.delete(waiter);
        waiter.wake();
        budget--;
      }
      return;
    }
    for (const fn of this.listeners.get(wakeup.kind) ?? []) fn();
  }

  /** How many workers are waiting right now (for metrics and tests). */
  get waiting(): number {
    return this.waiters.size;
  }
}
