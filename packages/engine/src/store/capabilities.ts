import type { DispatchTask } from './records.js';
import type { StoreTx } from './store.js';

/** One open store transaction: the operations, and a handle a dispatcher may join (opaque to the engine). */
export interface TransactionScope {
  readonly tx: StoreTx;
  readonly handle: unknown;
}

/**
 * Optional store capability: run `fn` in one transaction and hand it a handle on that transaction which a
 * dispatcher's `enqueueIn` knows how to join (PgStore hands out its reserved connection). Every operation on
 * `scope.tx` and every use of `scope.handle` must be in that one transaction, and it must roll back if
 * `fn` throws.
 */
export interface TransactionalStore {
  runInTransaction<T>(fn: (scope: TransactionScope) => Promise<T>): Promise<T>;
}

/**
 * Optional store capability, needed by a dispatcher that enqueues after commit: queued attempts that have
 * no row on the table queue and became queued at least `olderThanMs` ago (or, with `runIds`, every such
 * attempt of those runs at any age), with the time each may start. Advisory: no locks.
 */
export interface UndispatchedTasks {
  undispatchedTasks(filter: {
    readonly olderThanMs: number;
    readonly limit: number;
    readonly runIds?: readonly string[];
  }): Promise<DispatchTask[]>;
}
