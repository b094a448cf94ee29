import { emptyWriteSet } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plantDefinition, plantRun } from '../planted.js';

// Invariant 14: a finished attempt stays finished. Cancelling a run's open attempts (a run's end, a cancel, a
// terminate) reads which attempts are open from its snapshot; a worker's report may complete one of them and
// commit while the cancel waits for that row. The cancel must see the completion and leave the attempt
// completed, with its output, rather than overwrite it. A heartbeat that renews the lease meanwhile changes
// nothing the cancel cares about, and must not make the cancel miss the attempt: a cancelled attempt's
// later report is refused (invariant 27).

let db: TestDatabase;
let worker: PgStore;
let canceller: PgStore;
let definitionId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  // Separate pools: the report and the cancel are concurrent transactions on their own connections.
  worker = new PgStore(db.pool(1));
  canceller = new PgStore(db.pool(1));
  definitionId = await plantDefinition(db.sql, 'race');
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
    const { runId, taskId, token } = await plantRun(db.sql, { id: definitionId, name: 'race' }, 'race');

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

  it('cancel the attempt when a heartbeat commits while the cancel waits for it, and refuse its report', async () => {
    const { runId, taskId, token } = await plantRun(db.sql, { id: definitionId, name: 'race' }, 'race');
    const held = { runId, taskId, attempt: 1, leaseToken: token };

    let cancelling: Promise<unknown> | undefined;
    await worker.runInTransaction(async ({ tx }) => {
      expect(await tx.renewLeases([held], 60_000)).toEqual([taskId]);
      // The cancel starts now: its snapshot sees the attempt's old version, locked by the heartbeat.
      cancelling = canceller.transaction((c) =>
        c.write(
          { ...emptyWriteSet(), cancelOpenWork: [{ runId, reason: 'stopped', mode: 'cancel' }] },
          { commit: true },
        ),
      );
      await someoneWaitsForALock();
    });
    await cancelling;

    const rows = await db.sql<{ nodeId: string; status: string }[]>`
      SELECT node_id, status FROM weft.tasks WHERE run_id = ${runId}::uuid ORDER BY node_id`;
    expect(rows).toEqual([
      { nodeId: 'a', status: 'cancelled' },
      { nodeId: 'b', status: 'cancelled' },
    ]);
    const [verdict] = await worker.transaction((tx) =>
      tx.finishTasks([{ ...held, outcome: { kind: 'completed', output: { late: true } } }]),
    );
    expect(verdict).toMatchObject({ accepted: false, why: 'the task is already cancelled' });
  });
});
