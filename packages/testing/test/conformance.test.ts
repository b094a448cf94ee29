import { MemoryStore } from '@weft/memory';
import { PgStore } from '@weft/postgres';
import { createTestDatabase } from '@weft/testing';
import { storeConformance } from '@weft/testing/conformance';

// Every store Weft ships passes the same conformance suite. The Postgres store's handles are separate
// pools, so its concurrent tests run real concurrent transactions on separate connections.

storeConformance('PgStore (PostgreSQL)', async () => {
  const db = await createTestDatabase();
  return {
    store: new PgStore(db.pool(4)),
    connect: () => new PgStore(db.pool(2)),
    close: () => db.drop(),
  };
});

storeConformance('MemoryStore', async () => {
  const store = new MemoryStore();
  return { store, close: () => store.close() };
});
