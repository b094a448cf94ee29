import type { RunEvent } from '@weft/core';
import { Engine, type LeasedTask } from '@weft/engine';
import { armFault } from '@weft/engine/internal';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, work } from '../helpers.js';

// Invariant 28: a move checks the run as it is under its row lock, with its open attempts locked, and renames
// the attempts before the events that name them. Reports take the run lock first, so a report and a move are
// strictly ordered; the lease reaper does not, so a move locks the attempts it checks and renames.

const V1 = `
name: moving
nodes:
  - { id: a, task_type: move.step }
  - { id: b, task_type: move.step }
  - { id: c, task_type: move.step }
edges:
  - { from: a, to: b }
  - { from: b, to: c }
`;
// Version 2 renames b to b2 and puts x between it and c.
const V2 = `
name: moving
nodes:
  - { id: a, task_type: move.step }
  - { id: b2, task_type: move.step }
  - { id: x, task_type: move.step }
  - { id: c, task_type: move.step }
edges:
  - { from: a, to: b2 }
  - { from: b2, to: x }
  - { from: x, to: c }
`;

let db: TestDatabase;
let reporter: Engine;
let mover: Engine;

const target = { namespace: 'default', definition: 'moving', toVersion: 2, nodeMap: { b: 'b2' } };

async function poll(engine: Engine, max = 1): Promise<LeasedTask[]> {
  return engine.tasks.poll({ namespace: 'default', worker: 'w', taskTypes: ['move.step'], max, waitMs: 0 });
}

async function nodesRun(runId: string): Promise<string[]> {
  const rows = await db.sql<{ id: string }[]>`
    SELECT DISTINCT node_id AS id FROM weft.tasks WHERE run_id = ${runId}::uuid ORDER BY id`;
  return rows.map((r) => r.id);
}

beforeAll(async () => {
  db = await createTestDatabase();
  // Two engines, each on its own connections: reports and moves are separate transactions.
  reporter = new Engine({
    store: new PgStore(db.pool(4)),
    // The test plays the lease reaper itself, in a transaction it holds open.
    config: { decidePollMs: 20, leasePollMs: 600_000, crossProcessWakeups: false },
  });
  mover = new Engine({
    store: new PgStore(db.pool(4)),
    config: { backgroundLoops: false, crossProcessWakeups: false },
  });
  await reporter.start();
  await mover.start();
  await reporter.definitions.deploy('default', V1);
  await reporter.definitions.deploy('default', V2);
});
afterAll(async () => {
  await reporter?.stop();
  await mover?.stop();
  await db?.drop();
});

describe('moving a run while its worker reports', () => {
  it('every report lands, on the kept and on the renamed nodes, whichever commits first', async () => {
    const orders = new Set<string>();
    for (let round = 0; round < 9; round++) {
      const run = await reporter.runs.start({
        namespace: 'default',
        definition: 'moving',
        version: 1,
        input: {},
      });
      const [a] = await poll(reporter);
      await reporter.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(a!, 'A')] });
      const [b] = await eventually(async () => {
        const got = await poll(reporter);
        return got.length > 0 ? got : undefined;
      });
      expect(b!.nodeId).toBe('b');
      // The plan, read without locks, says the run can move: b is running.
      const plan = await mover.moves.plan({ ...target, runIds: [run.id] });
      expect(plan.runs[0]).toMatchObject({ movable: true });
      // A third of the rounds hold the report's transaction (with the run lock) after it finished b, so the
      // move waits for it; a third hold the move's after its claim, so the report waits; a third start both.
      const mode = round % 3;
      const hold = (name: string) => armFault(name, () => new Promise((r) => setTimeout(r, 80)));
      const disarm =
        mode === 0 ? hold('report.after-finish') : mode === 1 ? hold('move.after-claim') : () => {};
      try {
        const report = () =>
          reporter.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(b!, 'B')] });
        const move = () => mover.moves.apply({ ...target, runIds: [run.id] }, { by: 'ops' });
        const later = <T>(fn: () => Promise<T>) => new Promise((r) => setTimeout(r, 25)).then(fn);
        const [landed, [outcome]] =
          mode === 0
            ? await Promise.all([report(), later(move)])
            : mode === 1
              ? await Promise.all([later(report), move()])
              : await Promise.all([report(), move()]);
        // The report always lands: a move never takes an attempt from its worker.
        expect(landed.verdicts[0]).toMatchObject({ accepted: true });
        if (outcome!.moved) {
          orders.add('move first');
          expect(landed.verdicts[0]).toMatchObject({ nodeId: 'b2' });
        } else {
          orders.add('report first');
          // b finished on version 1 and started c there: version 2 would never run x.
          expect(outcome!.reasons.join(' ')).toMatch(/node "b" \(now "b2"\) has finished/);
        }
        await work(
          reporter,
          ['move.step'],
          () => 'ok',
          async () => {
            const now = await reporter.runs.get(run.id);
            return now.status === 'completed';
          },
        );
        const done = await reporter.runs.get(run.id);
        expect(done.definitionVersion).toBe(outcome!.moved ? 2 : 1);
        expect(await nodesRun(run.id)).toEqual(outcome!.moved ? ['a', 'b2', 'c', 'x'] : ['a', 'b', 'c']);
        const history = await reporter.context.store.readHistory(run.id, 0, 1000);
        expect(history.map((e) => e.seq)).toEqual(history.map((_, i) => i + 1));
        const migrated = history.filter((e) => e.type === 'run.migrated');
        expect(migrated).toHaveLength(outcome!.moved ? 1 : 0);
        if (outcome!.moved)
          expect(migrated[0]!.data).toMatchObject({ from_version: 1, to_version: 2, node_map: { b: 'b2' } });
      } finally {
        disarm();
      }
    }
    expect([...orders].sort()).toEqual(['move first', 'report first']);
  });
});

describe('moving a run while the lease reaper ends one of its attempts', () => {
  it('renames the event of an attempt the lease reaper ends while the move waits for it', async () => {
    const run = await reporter.runs.start({
      namespace: 'default',
      definition: 'moving',
      version: 1,
      input: {},
    });
    const [a] = await poll(reporter);
    await reporter.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(a!, 'A')] });
    const [b] = await eventually(async () => {
      const got = await poll(reporter);
      return got.length > 0 ? got : undefined;
    });
    await db.sql`UPDATE weft.tasks SET lease_expires_at = now() - interval '1 second'
                  WHERE run_id = ${run.id}::uuid AND id = ${b!.id}::uuid`;
    // The reaper's transaction, on its own connection: it ends b and leaves the failure in the inbox (under
    // the id it read, "b"), then stays open until the move is waiting for it.
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let reaped = () => {};
    const ended = new Promise<void>((r) => {
      reaped = r;
    });
    const reaping = mover.context.store.transaction(async (tx) => {
      await tx.requestDecisions([run.id], 'lease expired');
      const done = await tx.expireLeases([{ runId: run.id, taskId: b!.id }]);
      expect(done.map((t) => t.nodeId)).toEqual(['b']);
      await tx.appendInbox(
        done.map((t) => {
          const event: RunEvent = {
            kind: 'node_failed',
            nodeId: t.nodeId,
            iteration: t.iteration,
            attempt: t.attempt,
            error: { reason: 'lease_expired', retryable: true, message: 'the worker stopped renewing' },
          };
          return { runId: run.id, event };
        }),
      );
      reaped();
      await held;
    });
    await ended;
    const moving = mover.moves.apply({ ...target, runIds: [run.id] }, { by: 'ops' });
    await eventually(
      async () => {
        const [w] = await db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'`;
        return w!.n > 0 ? true : undefined;
      },
      30_000,
      'the move to wait for the reaper',
    );
    release();
    await reaping;
    const [outcome] = await moving;
    expect(outcome).toMatchObject({ moved: true });
    // The failure is decided on version 2, as b2's: it is retried, and the run goes on through x.
    await work(
      reporter,
      ['move.step'],
      () => 'ok',
      async () => {
        const now = await reporter.runs.get(run.id);
        return now.status === 'completed';
      },
    );
    expect(await nodesRun(run.id)).toEqual(['a', 'b2', 'c', 'x']);
    const attempts = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM weft.tasks WHERE run_id = ${run.id}::uuid AND node_id = 'b2'`;
    expect(attempts[0]!.n).toBe(2);
  });
});

describe('a move refused after it claimed the run', () => {
  it('decides the events it claimed, so a refusal strands nothing', async () => {
    const run = await mover.runs.start({ namespace: 'default', definition: 'moving', version: 1, input: {} });
    const [a] = await poll(mover);
    // A report that could not decide: a finished attempt, its event in the inbox, and a decision asked for
    // (held back a minute, so that only the move can claim it).
    await mover.context.store.transaction(async (tx) => {
      await tx.requestDecisions([run.id], 'test report', 60_000);
      await tx.finishTasks([completed(a!, 'A')]);
      await tx.appendInbox([
        { runId: run.id, event: { kind: 'node_completed', nodeId: 'a', iteration: '', attempt: 1 } },
      ]);
    });
    // Without the map, a (finished) would lead to b2 instead of b: refused.
    const [outcome] = await mover.moves.apply({ ...target, nodeMap: {}, runIds: [run.id] }, { by: 'ops' });
    expect(outcome).toMatchObject({ moved: false });
    expect(outcome!.reasons.join(' ')).toMatch(/node "a" has finished/);
    expect(await nodesRun(run.id)).toEqual(['a', 'b']);
    const inbox = await db.sql`SELECT 1 FROM weft.inbox WHERE run_id = ${run.id}::uuid`;
    expect(inbox).toHaveLength(0);
  });
});
