import type { LimitKind, LimitRecord, LimitUsage } from '../store/limit-records.js';
import type { Store } from '../store/store.js';
import type { Wakeups } from '../wakeups/wakeups.js';
import { checkLimit, type LimitBook } from './limits.js';

/** What the limit service uses. */
export interface LimitServiceDeps {
  readonly store: Store;
  /** This server's view of which task types are capped, reloaded on every change. */
  readonly limits: LimitBook;
  readonly wakeups: Wakeups;
}

/** Limits of a namespace, declared by API (definitions declare theirs when deployed). */
export class LimitService {
  constructor(private readonly ctx: LimitServiceDeps) {}

  /** Every limit of the namespace with how much of it is in use. */
  list(namespace: string): Promise<LimitUsage[]> {
    return this.ctx.store.limitUsage(namespace);
  }

  /** Creates or replaces a limit; it applies to the next lease (or start, for a quota). */
  async set(limit: LimitRecord): Promise<void> {
    checkLimit(limit);
    await this.ctx.store.transaction((tx) => tx.setLimits([limit]));
    await this.changed(limit.namespace);
  }

  /** Lifts a limit; false when there was none. */
  async delete(namespace: string, kind: LimitKind, name: string): Promise<boolean> {
    const deleted = await this.ctx.store.transaction((tx) => tx.deleteLimit(namespace, kind, name));
    if (deleted) await this.changed(namespace);
    return deleted;
  }

  /** Reloads this server's limit book, tells the others, and wakes polls that may now lease more. */
  async changed(namespace: string): Promise<void> {
    await this.ctx.limits.refresh();
    this.ctx.wakeups.announce([{ kind: 'limits' }, { kind: 'gates', namespace }]);
  }
}
