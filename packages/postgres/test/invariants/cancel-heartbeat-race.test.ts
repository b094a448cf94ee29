import { Engine, type LeasedTask } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed } from '../helpers.js';

// Invariant 27: a cancelled attempt stays cancelled, and its worker's report is refused. A worker keeps
// heartbeating while an operator cancels its run; each heartbeat makes a new version of the attempt's row,
// committed while the cancel waits for that row. The cancel must still cancel the attempt; left running,
// the worker's later report would be accepted against a cancelled run.

const ONE = `
name: beat
nodes:
  - { id: a, task_type: beat.step }
`;
const RUNS = 30;

let db: TestDatabase;
let worker: Engine;
let operator: Engine;

beforeAll(async () => {
  db = await createTestDatabase();
  // Two engines, each on its own connections: heartbeats and cancels are separate transactions.
  worker = new Engine({
    store: new PgStore(db.pool(4)),
    config: { backgroundLoops: false, crossProcessWakeups: false },
  });
  operator = new Engine({
    store: new PgStore(db.pool(4)),
    config: { backgroundLoops: false, crossProcessWakeups: false },
  });
  await worker.start();
  await operator.start();
  await worker.definitions.deploy('default', ONE);
});
afterAll(async () => {
  await worker?.stop();
  await operator?.stop();
  await db?.drop();
});

const held = (t: LeasedTask) => ({
  runId: t.runId,
  taskId: t.id,
  attempt: t.attempt,
  leaseToken: t.leaseToken,
});

describe('cancels racing heartbeats', () => {
  it('cancel every attempt whose worker keeps heartbeating, and refuse the reports that follow', async () => {
    for (let i = 0; i < RUNS; i++)
      await worker.runs.start({ namespace: 'default', definition: 'beat', input: {} });
    const leased = await worker.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['beat.step'],
      max: RUNS,
      waitMs: 0,
    });
    expect(leased).toHaveLength(RUNS);

    // Three heartbeaters renew every lease, over and over, until the cancels are done.
    let cancelling = true;
    let beats = 0;
    const beater = async () => {
      while (cancelling) {
        await worker.tasks.heartbeat('default', 'w', leased.map(held));
        beats++;
      }
    };
    const beaters = [beater(), beater(), beater()];
    try {
      for (const t of leased) await operator.control.cancel(t.runId, { by: 'ops', reason: 'race' });
    } finally {
      cancelling = false;
      await Promise.all(beaters);
    }
    expect(beats).toBeGreaterThan(0);

    const open = await db.sql<{ runId: string; status: string }[]>`
      SELECT run_id, status FROM weft.tasks
       WHERE run_id = ANY(${leased.map((t) => t.runId)}::uuid[]) AND status <> 'cancelled'`;
    expect(open).toEqual([]);
    const late = await worker.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: leased.map((t) => completed(t, 'late')),
    });
    expect(late.verdicts.filter((v) => v.accepted)).toEqual([]);
  });
});
