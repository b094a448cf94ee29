import type { Store, WorkerSighting } from '@weft/engine';
import type { FastifyBaseLogger } from 'fastify';

/** How often the workers seen are written to the store. */
export const WORKER_FLUSH_MS = 5000;

/**
 * Workers seen asking for tasks (polls, leases, reports that ask for more), remembered in memory and
 * written to the store every few seconds in one statement: the poll path itself costs nothing more, however
 * many workers poll. What a server had not written yet when it stops is written as it closes.
 */
export class WorkerSightings {
  private pending = new Map<string, { namespace: string; name: string; types: Set<string>; at: Date }>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly logger?: FastifyBaseLogger,
    private readonly flushMs = WORKER_FLUSH_MS,
  ) {}

  /** Notes that `name` asked for tasks of these types just now (memory only). */
  seen(namespace: string, name: string, taskTypes: readonly string[]): void {
    const key = `${namespace}\u0000${name}`;
    const entry = this.pending.get(key);
    if (entry) {
      for (const t of taskTypes) entry.types.add(t);
      entry.at = new Date();
    } else this.pending.set(key, { namespace, name, types: new Set(taskTypes), at: new Date() });
    this.timer ??= setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, this.flushMs);
  }

  /** The sightings not yet written, for a namespace (so a list shows a worker from its first poll on). */
  unwritten(namespace: string): WorkerSighting[] {
    return [...this.pending.values()]
      .filter((e) => e.namespace === namespace)
      .map((e) => ({ namespace: e.namespace, name: e.name, taskTypes: [...e.types], lastSeenAt: e.at }));
  }

  /** Writes what was seen since the last write. A failed write keeps the sightings for the next one. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const batch = this.pending;
      this.pending = new Map();
      const sightings = [...batch.values()].map((e) => ({
        namespace: e.namespace,
        name: e.name,
        taskTypes: [...e.types],
        lastSeenAt: e.at,
      }));
      try {
        await this.store.recordWorkers(sightings);
      } catch (error) {
        for (const [key, e] of batch) if (!this.pending.has(key)) this.pending.set(key, e);
        this.logger?.warn({ err: error }, 'could not write the workers seen; trying again later');
      }
    });
    return this.flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
  }
}
