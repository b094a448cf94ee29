import { Engine, type EngineConfig, type Store } from '@weft/engine';
import { MemoryStore } from '@weft/memory';
import { PgStore } from '@weft/postgres';
import { createTestDatabase } from '@weft/testing';

/** The stores the engine behaviours are checked on. */
export const STORES = ['postgres', 'memory'] as const;
/** A kind of store the behaviours run on. */
export type StoreKind = (typeof STORES)[number];

/** An engine on a fresh store of one kind, with fast polls. */
export interface StoreHarness {
  readonly kind: StoreKind;
  readonly store: Store;
  readonly engine: Engine;
  close(): Promise<void>;
}

/** A fresh store of the given kind: a PgStore on a database of its own, or a MemoryStore. */
export async function freshStore(kind: StoreKind): Promise<{ store: Store; close(): Promise<void> }> {
  if (kind === 'memory') {
    const store = new MemoryStore();
    return { store, close: () => store.close() };
  }
  const db = await createTestDatabase();
  return { store: new PgStore(db.pool(10)), close: () => db.drop() };
}

/** Creates an engine (background loops running) on a fresh store of `kind`. */
export async function storeHarness(
  kind: StoreKind,
  config: Partial<EngineConfig> = {},
): Promise<StoreHarness> {
  const { store, close } = await freshStore(kind);
  const engine = new Engine({
    store,
    config: { decidePollMs: 50, timerPollMs: 50, leasePollMs: 100, relayPollMs: 100, ...config },
  });
  await engine.start();
  return {
    kind,
    store,
    engine,
    async close() {
      await engine.stop();
      await close();
    },
  };
}
