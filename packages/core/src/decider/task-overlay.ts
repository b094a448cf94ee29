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
    return depth > MAX_DEPTH ? new TaskOverlay(flatten(base), 0) : new TaskOverlay(base, depth);
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
    return flatten(this).size;
  }

  /** The whole state as one map, copied: reading it all is rare in a decision (a run's end, a cancel). */
  entries(): MapIterator<[string, TaskState | null]> {
    return flatten(this).entries();
  }

  keys(): MapIterator<string> {
    return flatten(this).keys();
  }

  values(): MapIterator<TaskState | null> {
    return flatten(this).values();
  }

  forEach(
    fn: (value: TaskState | null, key: string, map: ReadonlyMap<string, TaskState | null>) => void,
    thisArg?: unknown,
  ): void {
    for (const [key, value] of flatten(this)) fn.call(thisArg, value, key, this);
  }

  [Symbol.iterator](): MapIterator<[string, TaskState | null]> {
    return this.entries();
  }

  /** The maps of a stack, the bottom one first: its first base, then each overlay's own changes. */
  static layers(top: ReadonlyMap<string, TaskState | null>): ReadonlyMap<string, TaskState | null>[] {
    const out: ReadonlyMap<string, TaskState | null>[] = [];
    let at = top;
    while (at instanceof TaskOverlay) {
      out.push(at.own);
      at = at.base;
    }
    out.push(at);
    return out.reverse();
  }
}

/** One map with what a stack of overlays reads as: the bottom map copied, each layer's changes set on it. */
function flatten(top: ReadonlyMap<string, TaskState | null>): Map<string, TaskState | null> {
  const [bottom, ...above] = TaskOverlay.layers(top);
  const out = new Map(bottom);
  for (const layer of above) for (const [key, value] of layer) out.set(key, value);
  return out;
}
