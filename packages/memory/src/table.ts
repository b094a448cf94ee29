/**
 * The building blocks of the in-memory store: tables of immutable rows with secondary indexes, and the
 * undo journal that lets a transaction roll back every change it made.
 */

/**
 * The changes a transaction made, as closures that put each one back. `null` for work done outside a
 * transaction (or after its commit): nothing to undo.
 */
export class Journal {
  private undo: (() => void)[] = [];
  private effects: (() => void)[] = [];

  /** Runs `fn` once the changes are committed; a rollback drops it. */
  onCommit(fn: () => void): void {
    this.effects.push(fn);
  }

  /** Records how to put back one change. */
  record(fn: () => void): void {
    this.undo.push(fn);
  }

  /** Puts back every recorded change, newest first, and forgets them. */
  rollback(): void {
    for (let i = this.undo.length - 1; i >= 0; i--) this.undo[i]!();
    this.undo = [];
    this.effects = [];
  }

  /** Forgets the recorded changes: they are now committed. Then runs what waited for the commit. */
  commit(): void {
    this.undo = [];
    const effects = this.effects;
    this.effects = [];
    for (const fn of effects) fn();
  }
}

/** A secondary index: rows grouped by a key computed from the row. */
export class Index<K, V> {
  private readonly groups = new Map<string, Set<K>>();

  constructor(private readonly keyOf: (row: V) => string | null) {}

  /** The primary keys of the rows whose index key is `key`. */
  keys(key: string): ReadonlySet<K> {
    return this.groups.get(key) ?? EMPTY;
  }

  add(pk: K, row: V): void {
    const key = this.keyOf(row);
    if (key === null) return;
    let set = this.groups.get(key);
    if (!set) {
      set = new Set();
      this.groups.set(key, set);
    }
    set.add(pk);
  }

  remove(pk: K, row: V): void {
    const key = this.keyOf(row);
    if (key === null) return;
    const set = this.groups.get(key);
    if (!set) return;
    set.delete(pk);
    if (set.size === 0) this.groups.delete(key);
  }
}

const EMPTY: ReadonlySet<never> = new Set();

/**
 * A table: rows by primary key. Rows are never changed in place: an update replaces the row, so the
 * journal can put the previous one back and a row handed to a reader never changes under it.
 */
export class Table<K, V> {
  private readonly rows = new Map<K, V>();
  private readonly indexes: Index<K, V>[] = [];

  /** Adds a secondary index (before any row is stored). */
  index(keyOf: (row: V) => string | null): Index<K, V> {
    const index = new Index<K, V>(keyOf);
    this.indexes.push(index);
    return index;
  }

  get(pk: K): V | undefined {
    return this.rows.get(pk);
  }

  has(pk: K): boolean {
    return this.rows.has(pk);
  }

  get size(): number {
    return this.rows.size;
  }

  values(): IterableIterator<V> {
    return this.rows.values();
  }

  /** The rows of the given keys that exist. */
  pick(keys: Iterable<K>): V[] {
    const out: V[] = [];
    for (const k of keys) {
      const row = this.rows.get(k);
      if (row !== undefined) out.push(row);
    }
    return out;
  }

  /** Inserts or replaces a row; the journal can undo it. */
  set(journal: Journal | null, pk: K, row: V): void {
    const prev = this.rows.get(pk);
    this.put(pk, row, prev);
    journal?.record(() => this.put(pk, prev, row));
  }

  /** Deletes a row; true when there was one. */
  delete(journal: Journal | null, pk: K): boolean {
    const prev = this.rows.get(pk);
    if (prev === undefined) return false;
    this.put(pk, undefined, prev);
    journal?.record(() => this.put(pk, prev, undefined));
    return true;
  }

  private put(pk: K, row: V | undefined, prev: V | undefined): void {
    if (prev !== undefined) for (const index of this.indexes) index.remove(pk, prev);
    if (row === undefined) {
      this.rows.delete(pk);
      return;
    }
    this.rows.set(pk, row);
    for (const index of this.indexes) index.add(pk, row);
  }
}
