import { randomUUID } from 'node:crypto';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plantDefinition } from '../planted.js';

// Invariant 6: decide-queue rows are taken in run id order, by requests and by claims alike. A request
// upserts its rows in that order; a claim that deleted them in the order it was given would take them
// against it, and a request and a claim sharing two runs would each hold the row the other waits for:
// PostgreSQL breaks the cycle by failing one of them (40P01, deadlock detected) after a second's wait, and
// the store runs the victim again. The stores count such retries; here there must be none.

let db: TestDatabase;
let requester: PgStore;
let claimer: PgStore;
let definitionId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  // Separate pools: the request and the claim are concurrent transactions on their own connections.
  requester = new PgStore(db.pool(4));
  claimer = new PgStore(db.pool(4));
  definitionId = await plantDefinition(db.sql, 'order');
});
afterAll(async () => {
  await requester?.close();
  await claimer?.close();
  await db?.drop();
});

/** Transactions run again because PostgreSQL found them deadlocked. */
const deadlocks = () => (requester.retries['40P01'] ?? 0) + (claimer.retries['40P01'] ?? 0);

/** Running runs, each with a pending decision; their ids in ascending order. */
async function plantRuns(n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomUUID()).sort();
  await db.sql`
    INSERT INTO weft.runs (id, namespace, definition_id, definition_name, definition_version, status, input)
    SELECT id, 'default', ${definitionId}::bigint, 'order', 1, 'running', '{}' FROM unnest(${ids}::uuid[]) AS k(id)`;
  await db.sql`INSERT INTO weft.decide_queue (run_id, reason) SELECT id, 'earlier' FROM unnest(${ids}::uuid[]) AS k(id)`;
  return ids;
}

/** Waits until some backend of the test database waits for a row lock. */
async function someoneWaitsForALock(): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const [row] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    if (row!.n > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the claim never waited for the requested row');
}

describe('decide-queue rows taken by a request and a claim', () => {
  it('are taken in one order, so a claim given ids in descending order never deadlocks a request', async () => {
    const [low, high] = await plantRuns(2);
    let claiming: Promise<string[]> | undefined;
    await requester.transaction(async (tx) => {
      await tx.requestDecisions([low!], 'first');
      // The claim starts now, holding both runs' locks as a decision does, and is given the ids high first.
      claiming = claimer.transaction(async (c) => {
        await c.lockRuns([low!, high!], 'wait');
        return c.claimDecisions([high!, low!]);
      });
      await someoneWaitsForALock();
      await tx.requestDecisions([high!], 'second');
    });
    const claimed = await claiming!;
    expect(deadlocks()).toBe(0);
    expect([...claimed].sort()).toEqual([low, high]);
    // The claim waited for the request, so the request's rows were claimed with it: none is left behind.
    const [left] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM weft.decide_queue WHERE run_id IN (${low!}::uuid, ${high!}::uuid)`;
    expect(left!.n).toBe(0);
  });

  it('of many runs, by concurrent requests and claims in shuffled order, all commit', async () => {
    const ids = await plantRuns(40);
    const before = deadlocks();
    const shuffled = () => [...ids].sort(() => Math.random() - 0.5);
    const errors: unknown[] = [];
    const work = Array.from({ length: 6 }, async (_, i) => {
      for (let round = 0; round < 10; round++) {
        const batch = shuffled().slice(0, 12);
        await (i % 2 === 0
          ? requester.transaction((tx) => tx.requestDecisions(batch, 'stress'))
          : claimer.transaction((tx) => tx.claimDecisions(batch))
        ).catch((e: unknown) => errors.push(e));
      }
    });
    await Promise.all(work);
    expect(errors).toEqual([]);
    expect(deadlocks() - before).toBe(0);
  });
});
