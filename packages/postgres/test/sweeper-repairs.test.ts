import { PgStore } from '@weft/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Harness, harness, lease } from './helpers.js';

// The sweeper's audit of its repairs: a row per repair, written with the repair, saying what was found and
// what the repair changed; a later round says whether the run then moved.

const CHAIN = `
name: chain
nodes:
  - { id: a, task_type: rp.a }
  - { id: b, task_type: rp.b, input: { got: nodes.a.output } }
edges:
  - { from: a, to: b }
`;
const IDLE = 5 * 60_000;

let h: Harness;
beforeAll(async () => {
  h = await harness({ sweepPollMs: 3_600_000 });
  await h.engine.definitions.deploy('default', CHAIN);
});
afterAll(async () => {
  await h?.close();
});

/** A run stranded by a lost event: a finished, its completion never decided, idle for ten minutes. */
async function strandedRun(): Promise<string> {
  const run = await h.engine.runs.start({ namespace: 'default', definition: 'chain', input: {} });
  const [a] = (await lease(h.engine, ['rp.a'], 10)).filter((t) => t.runId === run.id);
  await h.db.sql`UPDATE weft.tasks SET status = 'completed', output = '{"n": 7}', finished_at = now()
                  WHERE run_id = ${run.id}::uuid AND id = ${a!.id}::uuid`;
  await h.db.sql`UPDATE weft.history SET at = at - interval '10 minutes' WHERE run_id = ${run.id}::uuid`;
  return run.id;
}

/** Makes the run's repairs look one idle threshold old, so the next round checks them. */
async function ageRepairs(runId: string) {
  await h.db.sql`UPDATE weft.sweeper_repairs SET repaired_at = repaired_at - interval '10 minutes'
                  WHERE run_id = ${runId}::uuid`;
}

const repairsOf = async (runId: string) => h.store.listRepairs({ namespace: 'default', runId, limit: 10 });

describe('the sweeper audit', () => {
  it('writes a row per repair with what was found and what changed, then whether the run moved', async () => {
    const runId = await strandedRun();
    const lastBefore = (await h.store.readHistory(runId, 0, 100)).at(-1)!;
    expect(await h.engine.sweeper.round(IDLE)).toEqual([runId]);
    const [row] = await repairsOf(runId);
    expect(row).toMatchObject({
      runId,
      namespace: 'default',
      definition: 'chain',
      status: 'running',
      lastEvent: { seq: lastBefore.seq, type: lastBefore.type },
      moved: null,
      checkedAt: null,
    });
    expect(row!.idleMs).toBeGreaterThanOrEqual(IDLE);
    expect(row!.changed.events[0]).toBe('run.repaired');
    expect(row!.changed.tasks).toEqual([{ node: 'b', iteration: '', attempt: 1 }]);
    expect(row!.firstSeq).toBe(lastBefore.seq + 1);
    // Checked by a round one idle threshold later: b was queued by the repair, so the run moved.
    const before = h.engine.sweeper.stats.checkedMoved;
    await ageRepairs(runId);
    expect(await h.engine.sweeper.round(IDLE)).toEqual([]);
    expect(await repairsOf(runId)).toMatchObject([{ moved: true, checkedAt: expect.any(Date) }]);
    expect(h.engine.sweeper.stats.checkedMoved).toBe(before + 1);
    // Checked once: a further round leaves it as it was.
    const checkedAt = (await repairsOf(runId))[0]!.checkedAt;
    await h.engine.sweeper.round(IDLE);
    expect((await repairsOf(runId))[0]!.checkedAt).toEqual(checkedAt);
  });

  it('says a run did not move when it is as stuck after the repair as before', async () => {
    const runId = await strandedRun();
    expect(await h.engine.sweeper.round(IDLE)).toEqual([runId]);
    // The repair's work is lost too: its queued attempt of b vanishes.
    await h.db.sql`DELETE FROM weft.queue WHERE run_id = ${runId}::uuid`;
    await h.db.sql`DELETE FROM weft.tasks WHERE run_id = ${runId}::uuid AND node_id = 'b'`;
    const before = h.engine.sweeper.stats.checkedStuck;
    await ageRepairs(runId);
    await h.engine.sweeper.round(IDLE);
    expect(await repairsOf(runId)).toMatchObject([{ moved: false }]);
    expect(h.engine.sweeper.stats.checkedStuck).toBe(before + 1);
    expect(await h.store.listRepairs({ namespace: 'default', moved: false, limit: 10 })).toMatchObject([
      { runId },
    ]);
    expect(await h.store.listRepairs({ namespace: 'other', limit: 10 })).toEqual([]);
  });

  it('each repair is checked once, by one of two racing checks', async () => {
    const runs = [await strandedRun(), await strandedRun(), await strandedRun()];
    expect((await h.engine.sweeper.round(IDLE)).sort()).toEqual([...runs].sort());
    for (const r of runs) await ageRepairs(r);
    // Another server's check holds the rows (and marks them) in a transaction that has not committed.
    const holder = h.db.pool(1);
    const other = new PgStore(h.db.pool(1));
    try {
      let racing: Promise<{ moved: number; stuck: number }> | null = null;
      let settled = false;
      await holder.begin(async (tx) => {
        await tx`UPDATE weft.sweeper_repairs SET moved = true, checked_at = now()
                  WHERE run_id = ANY(${runs}::uuid[]) AND moved IS NULL`;
        racing = other.checkRepairs(0, 100).finally(() => {
          settled = true;
        });
        // Until the racing check has answered, or waits on the rows this transaction holds.
        await eventually(async () => {
          if (settled) return true;
          const [w] = await h.db.sql<{ n: number }[]>`
            SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND query LIKE '%sweeper_repairs%'`;
          return w!.n > 0 ? true : undefined;
        });
      });
      const got = await racing!;
      expect(got).toEqual({ moved: 0, stuck: 0 });
      const checked = await h.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM weft.sweeper_repairs WHERE run_id = ANY(${runs}::uuid[]) AND moved`;
      expect(checked[0]!.n).toBe(3);
    } finally {
      await holder.end();
      await other.close();
    }
  });
});
