import { WeftError } from '@weft/core';
import { Journal } from './table.js';

/** One transaction of the in-memory store: its undo journal, its time, the row locks it holds. */
export class TxScope {
  /** Null once committed: later changes (after `write(..., { commit: true })`) are not undone. */
  journal: Journal | null = new Journal();
  readonly locks = new Set<string>();
  ended = false;

  constructor(
    /** The transaction's time: like PostgreSQL's now(), fixed when the transaction starts. */
    readonly now: Date,
  ) {}
}

/**
 * Row locks by key (`run:<id>`, `schedule:<ns>:<name>`, ...). Transactions run one at a time, so a lock
 * held by another transaction can only be one that is suspended around this one: a transaction started
 * from inside another (as PostgreSQL would run it on a second connection). `skip` passes such rows over,
 * as SKIP LOCKED does; waiting for one would wait forever, so it is reported as a deadlock.
 */
export class LockTable {
  private readonly held = new Map<string, TxScope>();

  /** Takes the lock of `key` for `tx`; false when another transaction holds it and `mode` is `skip`. */
  take(tx: TxScope, key: string, mode: 'wait' | 'skip'): boolean {
    const owner = this.held.get(key);
    if (owner === undefined || owner === tx || owner.ended) {
      this.held.set(key, tx);
      tx.locks.add(key);
      return true;
    }
    if (mode === 'skip') return false;
    throw new WeftError(
      'deadlock',
      `a transaction waits for ${key}, which the transaction it was started from holds: it would wait forever; ` +
        'start it after the enclosing transaction ends',
      500,
    );
  }

  /** True when a transaction other than `tx` holds `key`. */
  heldByOther(tx: TxScope, key: string): boolean {
    const owner = this.held.get(key);
    return owner !== undefined && owner !== tx && !owner.ended;
  }

  /** Releases every lock of a transaction that ended. */
  release(tx: TxScope): void {
    for (const k of tx.locks) if (this.held.get(k) === tx) this.held.delete(k);
    tx.locks.clear();
  }
}

/** A FIFO async mutex: `acquire` resolves with the function that releases it. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();

  acquire(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ready = this.tail.then(() => release);
    this.tail = this.tail.then(() => next);
    return ready;
  }
}
