import { WeftError } from '@weft/core';
import type { TxScope } from './locks.js';

/**
 * What MemoryStore's `runInTransaction` hands a dispatcher that joins its transactions (`enqueueIn`):
 * a way to make a change that commits with the transaction. An in-process queue registers its push here,
 * so a message appears when the tasks it names commit, and never for a transaction that rolls back.
 */
export interface MemoryTransactionHandle {
  /**
   * Runs `effect` when the transaction commits (at once if it has committed already, after a
   * `write(..., { commit: true })`); a rollback drops it. Keep it short and synchronous.
   */
  afterCommit(effect: () => void): void;
}

/** True for a handle MemoryStore handed out. */
export function isMemoryTransactionHandle(handle: unknown): handle is MemoryTransactionHandle {
  return (
    typeof handle === 'object' &&
    handle !== null &&
    typeof (handle as Partial<MemoryTransactionHandle>).afterCommit === 'function'
  );
}

/** The handle on one transaction of the in-memory store. */
export function transactionHandle(scope: TxScope): MemoryTransactionHandle {
  return {
    afterCommit(effect) {
      if (scope.ended)
        throw new WeftError(
          'transaction_ended',
          'afterCommit was called after its transaction ended: call it inside the runInTransaction callback',
          500,
        );
      if (scope.journal) scope.journal.onCommit(effect);
      else effect(); // committed already (a write with `commit`): what follows is kept at once
    },
  };
}
