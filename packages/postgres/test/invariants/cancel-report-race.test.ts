import { randomUUID } from 'node:crypto';
import { emptyWriteSet } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Seed 001, invariant 7: a finished attempt stays finished. Cancelling a run's open attempts (a run's end,
// a cancel, a terminate) reads which attempts are open from its snapshot; a worker's report may complete
// one of them and commit while the cancel waits for that row. The cancel must see the completion and
// leave the attempt completed, with its output, rather than overwrite it.

let db: TestDatabase;
let worker: PgStore;
let canceller: PgStore;
let definitionId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  // Separate pools: the report and the cancel are concurrent transactions on their own connections.
  worker = new PgStore(db.pool(1));
  canceller = new PgStore(db.pool(1));
  const [def] = await db.sql<{ id: string }[]>`
    INSERT INTO weft.definitions (namespace, name, version, hash, source, definition)
    VALUES ('default', 'race', 1, 'h', '', '{}') RETURNING id::text`;
  definitionId = def!.id;
});
afterAll(async () => {
  await worker?.close();
  await canceller?.close();
  await db?.drop();
});

/** Waits until some backend of the test database waits for a row lock. */
async function someoneWaitsForALock(): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const [row] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    if (row!.n > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the cancel never waited for the reported row');
}

describe('a cancel and a report on the same attempt', () => {
  it('leave the attempt completed when the report commits while the cancel waits for it', async () => {
    const runId = randomUUID();
    const taskId = randomUUID();
    const token = randomUUID();
    await db.sql`
      INSERT INTO weft.runs (id, namespace, definition_id, definition_name, definition_version, status, input)
      VALUES (${runId}::uuid, 'default', ${definitionId}::bigint, 'race', 1, 'running', '{}')`;
    await db.sql`
      INSERT INTO weft.tasks (run_id, id, node_id, attempt, status, task_type, worker, lease_token, lease_expires_at)
      VALUES (${runId}::uuid, ${taskId}::uuid, 'a', 1, 'running', 'race', 'w', ${token}::uuid, now() + interval '1 minute'),
             (${runId}::uuid, gen_random_uuid(), 'b', 1, 'waiting', NULL, NULL, NULL, NULL)`;

    let cancelling: Promise<unknown> | undefined;
    await worker.runInTransaction(async ({ tx }) => {
      const [verdict] = await tx.finishTasks([
        { runId, taskId, attempt: 1, leaseToken: token, outcome: { kind: 'completed', output: { done: 1 } } },
      ]);
      expect(verdict?.accepted).toBe(true);
      // The cancel starts now: its snapshot sees the attempt running, and its row is locked by the report.
      cancelling = canceller.transaction((c) =>
        c.write(
          { ...emptyWriteSet(), cancelOpenWork: [{ runId, reason: 'stopped', mode: 'cancel' }] },
          { commit: true },
        ),
      );
      await someoneWaitsForALock();
    });
    await cancelling;

    const rows = await db.sql<{ nodeId: string; status: string; output: unknown }[]>`
      SELECT node_id, status, output FROM weft.tasks WHERE run_id = ${runId}::uuid ORDER BY node_id`;
    expect(rows).toEqual([
      { nodeId: 'a', status: 'completed', output: { done: 1 } },
      { nodeId: 'b', status: 'cancelled', output: null },
    ]);
  });
});
