import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Servers write the workers they saw in one upsert each, every few seconds; two servers see the same
// workers. An upsert locks the rows it touches as it goes, so two batches that reach the same rows in
// opposite orders wait on each other in a cycle and PostgreSQL aborts one with a deadlock. Each batch is
// therefore written in key order: whatever order a server saw its workers in, they all lock in one order.

let db: TestDatabase;
let servers: PgStore[];

beforeAll(async () => {
  db = await createTestDatabase();
  servers = [new PgStore(db.pool(2)), new PgStore(db.pool(2)), new PgStore(db.pool(2))];
});
afterAll(async () => {
  for (const s of servers ?? []) await s.close();
  await db?.drop();
});

describe('worker sightings', () => {
  it('servers writing the same workers at once never deadlock', async () => {
    const names = Array.from({ length: 300 }, (_, i) => `worker-${String(i).padStart(3, '0')}`);
    const batch = (order: string[], at: Date) =>
      order.map((name) => ({ namespace: 'default', name, taskTypes: ['a'], lastSeenAt: at }));
    const failures: unknown[] = [];
    for (let round = 0; round < 30; round++) {
      const at = new Date(Date.now() - 1000 + round);
      const forward = batch(names, at);
      const backward = batch([...names].reverse(), at);
      const shuffled = batch(
        [...names].sort(() => Math.random() - 0.5),
        at,
      );
      const results = await Promise.allSettled([
        servers[0]!.recordWorkers(forward),
        servers[1]!.recordWorkers(backward),
        servers[2]!.recordWorkers(shuffled),
      ]);
      for (const r of results) if (r.status === 'rejected') failures.push(r.reason);
    }
    expect(failures.map((f) => String(f))).toEqual([]);
    const seen = await servers[0]!.listWorkers('default', new Date(Date.now() - 60_000));
    expect(seen).toHaveLength(names.length);
  });
});
