import { WeftError } from '@weft/core';
import type { TransactionalStore, UndispatchedTasks } from '../store/capabilities.js';
import type { Store } from '../store/store.js';
import type { Dispatcher, QueueDispatcher, RowDispatcher } from './dispatcher.js';

/**
 * What the engine settled on at construction (see docs/guide/custom-dispatchers.md):
 * - `rows`: Weft's own dispatcher; queue or outbox rows are written with the transaction.
 * - `in_transaction`: the store can hand out its transaction and the dispatcher can join it, so each
 *   write and its messages commit together.
 * - `after_commit`: write, commit, then enqueue; a crash in between is repaired (see `Redispatcher`).
 */
export type DispatchMode =
  | { readonly kind: 'rows'; readonly dispatcher: RowDispatcher }
  | {
      readonly kind: 'in_transaction';
      readonly dispatcher: QueueDispatcher & Required<Pick<QueueDispatcher, 'enqueueIn'>>;
      readonly store: TransactionalStore;
      readonly repair: UndispatchedTasks | null;
    }
  | {
      readonly kind: 'after_commit';
      readonly dispatcher: QueueDispatcher;
      readonly repair: UndispatchedTasks;
    };

/** True when the store offers `runInTransaction`. */
export function isTransactionalStore(store: Store): store is Store & TransactionalStore {
  return typeof (store as Partial<TransactionalStore>).runInTransaction === 'function';
}

function repairOf(store: Store): UndispatchedTasks | null {
  const s = store as Partial<UndispatchedTasks>;
  return typeof s.undispatchedTasks === 'function' ? (store as Store & UndispatchedTasks) : null;
}

/**
 * Decides how dispatch works for a store and a dispatcher. Both transactional capabilities present: the
 * write and its dispatches commit together. Otherwise write-then-enqueue, which needs the store to find
 * queued tasks left without a message (refused with a `bad_config` error that says so).
 */
export function negotiateDispatch(store: Store, dispatcher: Dispatcher): DispatchMode {
  if (dispatcher.kind === 'rows') return { kind: 'rows', dispatcher };
  if (dispatcher.kind !== 'queue')
    throw new WeftError(
      'bad_config',
      `dispatcher "${(dispatcher as { name?: string }).name}" has kind ${JSON.stringify((dispatcher as { kind?: unknown }).kind)}; a dispatcher is { kind: 'rows', addRows } or { kind: 'queue', enqueue }`,
    );
  const repair = repairOf(store);
  if (typeof dispatcher.enqueueIn === 'function' && isTransactionalStore(store))
    return {
      kind: 'in_transaction',
      dispatcher: dispatcher as QueueDispatcher & Required<Pick<QueueDispatcher, 'enqueueIn'>>,
      store,
      repair,
    };
  if (!repair)
    throw new WeftError(
      'bad_config',
      `dispatcher "${dispatcher.name}" enqueues after commit, which needs a store that can list queued tasks left without a message (undispatchedTasks) so that a crash between commit and enqueue is repaired; give the store that method, or give both the store runInTransaction and the dispatcher enqueueIn`,
    );
  return { kind: 'after_commit', dispatcher, repair };
}
