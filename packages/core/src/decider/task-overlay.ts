import type { TaskState } from './state.js';

/** Overlays stacked on one another before a new one copies them into one map (see TaskOverlay.over). */
const MAX_DEPTH = 16;

/**
 * The node instances one decision reads and changes: the state it was given, which it never changes, with
 * its own changes on top. A pass decides a run's events one after another, each from the state the one
 * before left, and that state holds every row of the run read or written so far in the pass (a map's
 * items: hundreds to thousands). Copying it for every decision made each event cost time in proportion to
 * it, so a pass of many events of one run cost their square. An overlay costs its own changes; reads go
 * down the stack, and every MAX_DEPTH decisions one copy flattens it, so no lookup goes deeper than that.
 */
export class TaskOverlay implements ReadonlyMap<string, TaskState | null> {
  private readonly own = new Map<string, TaskState | null>();

  private constructor(
    private readonly base: ReadonlyMap<string, TaskState | null>,
    private readonly depth: number,
  ) {}

  /** A fresh overlay on `base`, which it never changes (flattened first when the stack is deep). */
  static over(base: ReadonlyMap<string, TaskState | null>): TaskOverlay {
    const depth = base instanceof TaskOverlay ? base.depth + 1 : 0;
    return depth > MAX_DEPTH ? new TaskOverlay(TaskOverlay.flatten(base), 0) : new TaskOverlay(base, depth);
  }

  get(key: string): TaskState | null | undefined {
    return this.own.has(key) ? this.own.get(key) : this.base.get(key);
  }

  has(key: string): boolean {
    return this.own.has(key) || this.base.has(key);
  }

  /** Changes this overlay only; the base stays as it was given. */
  set(key: string, value: TaskState | null): this {
    this.own.set(key, value);
    return this;
  }

  get size(): number {
    return TaskOverlay.flatten(this).size;
  }

  /** Walks a copy of the whole state: reading it all is rare in a decision (a run's end, a cancel). */
  entries(): MapIterator<[string, TaskState | null]> {
    return TaskOverlay.flatten(this).entries();
  }

  keys(): MapIterator<string> {
    return TaskOverlay.flatten(this).keys();
  }

  values(): MapIterator<TaskState | null> {
    return TaskOverlay.flatten(this).values();
  }

  forEach(
    fn: (value: TaskState | null, key: string, map: ReadonlyMap<string, TaskState | null>) => void,
    thisArg?: unknown,
  ): void {
    for (const [key, value] of TaskOverlay.flatten(this)) fn.call(thisArg, value, key, this);
  }

  [Symbol.iterator](): MapIterator<[string, TaskState | null]> {
    return this.entries();
  }

  /**
   * One map with what a stack of overlays reads as (a copy: the caller may change it): the bottom map
   * copied, then each overlay's own changes set on it from the bottom up.
   */
  private static flatten(top: ReadonlyMap<string, TaskState | null>): Map<string, TaskState | null> {
    const layers: ReadonlyMap<string, TaskState | null>[] = [];
    let at = top;
    while (at instanceof TaskOverlay) {
      layers.push(at.own);
      at = at.base;
    }
    const out = new Map(at);
    for (let i = layers.length - 1; i >= 0; i--) for (const [key, value] of layers[i]!) out.set(key, value);
    return out;
  }
}
