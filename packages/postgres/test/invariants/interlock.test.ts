import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Invariants 2 and 3: a decider's claim must wait for a reporter that has requested a decision but not yet
// committed, so that the decider's reads see the report. With ON CONFLICT DO NOTHING the claim slips past the
// uncommitted reporter, reads old state, and the wake-up is lost.

let db: TestDatabase;
let reporter: PgStore;
let decider: PgStore;
let runId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  reporter = new PgStore(db.pool(2));
  decider = new PgStore(db.pool(2));
  const [def] = await db.sql<{ id: string }[]>`
    INSERT INTO weft.definitions (namespace, name, version, hash, source, definition)
    VALUES ('default', 'd', 1, 'h', '', '{}') RETURNING id::text`;
  runId = '01900000-0000-7000-8000-000000000001';
  await db.sql`INSERT INTO weft.runs (id, namespace, definition_id, definition_name, definition_version, status, input)
               VALUES (${runId}, 'default', ${def!.id}::bigint, 'd', 1, 'running', '{}')`;
});
afterAll(async () => {
  await db?.drop();
});

describe('decide queue interlock', () => {
  it('a claim returns only after a concurrent request commits, and then sees its change', async () => {
    // A pending decision already exists (committed), as after any earlier event.
    await reporter.transaction((tx) => tx.requestDecisions([runId], 'earlier event'));

    let upserted!: () => void;
    const upsertDone = new Promise<void>((r) => {
      upserted = r;
    });
    let committedAt = 0;
    const holdMs = 250;
    const reporting = reporter
      .transaction(async (tx) => {
        await tx.requestDecisions([runId], 'task report');
        await tx.appendInbox([{ runId, event: { kind: 'run_cancelled', by: 'interlock-test' } }]);
        upserted();
        await new Promise((r) => setTimeout(r, holdMs));
      })
      .then(() => {
        committedAt = Date.now();
      });

    await upsertDone;
    const started = Date.now();
    const { claimedAt, claimed, seen } = await decider.transaction(async (tx) => {
      const claimed = await tx.claimDecisions([runId]);
      const claimedAt = Date.now();
      const seen = await tx.readInbox([runId]);
      return { claimedAt, claimed, seen };
    });
    await reporting;

    expect(claimed).toEqual([runId]);
    // The claim waited for the reporter's commit (a lower bound: a slow machine only makes it longer; when
    // each side's process saw the commit is not compared, as either may be told first)...
    expect(claimedAt - started).toBeGreaterThanOrEqual(holdMs - 50);
    expect(committedAt).toBeGreaterThan(0);
    // ...so what it read next includes the reporter's event.
    expect(seen.map((i) => i.event.kind)).toEqual(['run_cancelled']);
  });
});
