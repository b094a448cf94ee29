import { type Json, WeftError } from '@weft/core';
import { Engine, type LeasedTask } from '@weft/engine';
import { armFault } from '@weft/engine/internal';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, failed } from '../helpers.js';
import { sleep } from './cluster.js';

// Saga compensation touches the decider, so it keeps invariants 1 to 4 and adds invariant 24: the saga log is
// written by the decisions that see completions (under the run lock), a failing run's first compensation is
// asked for in the failing transaction (an inbox event and a decide-queue row), and each compensation is an
// ordinary task run by a worker, outside any transaction.

const STEPS = ['s1', 's2', 's3', 's4', 's5', 's6'];

const SAGA = `
name: saga
nodes:
  - { id: start, task_type: saga.step }
${STEPS.map((s) => `  - { id: ${s}, task_type: saga.step, compensate: { task_type: saga.undo, input: { step: "'${s}'", out: nodes.${s}.output } } }`).join('\n')}
  - { id: boom, task_type: saga.boom, retry: { max_attempts: 1 } }
  - { id: join, task_type: saga.step }
edges:
  - { from: start, to: [${STEPS.join(', ')}, boom] }
${STEPS.map((s) => `  - { from: ${s}, to: join }`).join('\n')}
  - { from: boom, to: join }
`;

let db: TestDatabase;
let engines: Engine[];

beforeAll(async () => {
  db = await createTestDatabase();
  // Three engines, each on its own connections: every report below is a transaction of its own.
  engines = [0, 1, 2].map(
    (i) =>
      new Engine({
        store: new PgStore(db.pool(4)),
        config: {
          decidePollMs: 20,
          timerPollMs: 20,
          leasePollMs: 50,
          leaseMs: 400,
          heartbeatMs: 100,
          crossProcessWakeups: false,
          backgroundLoops: i === 0,
        },
      }),
  );
  for (const e of engines) await e.start();
  await engines[0]!.definitions.deploy('default', SAGA);
});
afterAll(async () => {
  for (const e of engines ?? []) await e.stop();
  await db?.drop();
});

const poll = (engine: Engine, types: string[], max = 20, waitMs = 0) =>
  engine.tasks.poll({ namespace: 'default', worker: 'w', taskTypes: types, max, waitMs });

const report = (engine: Engine, reports: Parameters<Engine['tasks']['report']>[0]['reports']) =>
  engine.tasks.report({ namespace: 'default', worker: 'w', reports });

/** Starts a saga run, completes its first step, and leases the branches it opens (the steps and boom). */
async function startToBranches() {
  const run = await engines[0]!.runs.start({ namespace: 'default', definition: 'saga', input: {} });
  const [start] = await eventually(async () => {
    const got = await poll(engines[1]!, ['saga.step'], 1);
    return got.length > 0 ? got : undefined;
  });
  await report(engines[1]!, [completed(start!, null)]);
  const branches = await eventually(async () => {
    const got = await poll(engines[1]!, ['saga.step', 'saga.boom'], 20);
    return got.length === STEPS.length + 1 ? got : undefined;
  });
  return { run, branches };
}

/** Runs compensations one lease at a time until the run ends; returns the steps in the order undone. */
async function compensate(runId: string): Promise<string[]> {
  const undone: string[] = [];
  const until = Date.now() + 20_000;
  for (;;) {
    const run = await engines[0]!.runs.get(runId);
    if (run.status !== 'compensating') return undone;
    if (Date.now() > until) throw new Error(`run ${runId} is still compensating`);
    const tasks = await poll(engines[1]!, ['saga.undo'], 20, 100);
    // One at a time: never two compensations of a run queued together.
    expect(tasks.length).toBeLessThanOrEqual(1);
    for (const t of tasks) {
      undone.push((t.input as { step: string }).step);
      await report(engines[2]!, [completed(t, 'undone')]);
    }
  }
}

describe('saga compensation on PostgreSQL', () => {
  it('compensates every step that completed, once, last completed first, when completions race the failure', async () => {
    const outcomes = new Set<number>();
    for (let round = 0; round < 8; round++) {
      const run = await engines[0]!.runs.start({ namespace: 'default', definition: 'saga', input: {} });
      await eventually(
        async () => ((await poll(engines[1]!, ['saga.step'], 1)) as LeasedTask[])[0],
        5000,
      ).then((start) => report(engines[1]!, [completed(start, null)]));
      const branches = await eventually(async () => {
        const got = await poll(engines[1]!, ['saga.step', 'saga.boom'], 20);
        return got.length > 0 ? got : undefined;
      });
      const more = await poll(engines[1]!, ['saga.step', 'saga.boom'], 20);
      const all = [...branches, ...more];
      expect(all.map((t) => t.nodeId).sort()).toEqual([...STEPS, 'boom'].sort());
      // Every branch reports in its own transaction, on three engines at once; the failure lands at a
      // different place in each round.
      const at = round % (STEPS.length + 1);
      await Promise.all(
        all.map(async (t, i) => {
          await sleep(((i + at) % 4) * 3);
          const engine = engines[i % 3]!;
          if (t.nodeId === 'boom') return report(engine, [failed(t, 'card declined', false)]);
          return report(engine, [completed(t, { n: t.nodeId } as Json)]);
        }),
      );
      const undone = await compensate(run.id);
      const final = await engines[0]!.runs.get(run.id);
      expect(final.status).toBe('failed');
      const rows = await db.sql<{ node: string; status: string }[]>`
        SELECT node_id AS node, status FROM weft.tasks WHERE run_id = ${run.id}::uuid AND node_id LIKE 's_'`;
      const done = rows.filter((r) => r.status === 'completed').map((r) => r.node);
      outcomes.add(done.length);
      // Exactly the completed steps are undone, each once.
      expect([...undone].sort()).toEqual([...done].sort());
      // In reverse order of the decisions that saw the completions (history is in decision order).
      const history = await engines[0]!.context.store.readHistory(run.id, 0, 1000);
      const seen = history
        .filter((h) => h.type === 'task.completed' && STEPS.includes(h.nodeId ?? ''))
        .map((h) => h.nodeId);
      expect(undone).toEqual([...seen].reverse());
      // Each compensation is recorded like any task: scheduled, then completed, one after the other.
      const steps = history
        .filter((h) => h.nodeId?.endsWith('.compensate'))
        .map((h) => `${h.type} ${h.nodeId}`);
      expect(steps).toEqual(
        undone.flatMap((s) => [`task.scheduled ${s}.compensate`, `task.completed ${s}.compensate`]),
      );
      expect(final.error).toMatchObject({
        node: 'boom',
        compensation: { status: 'completed', compensated: undone },
      });
      expect(history.map((h) => h.seq)).toEqual(history.map((_, i) => i + 1));
      // Nothing is left open or leasable.
      const open = await db.sql`
        SELECT 1 FROM weft.tasks WHERE run_id = ${run.id}::uuid AND status IN ('waiting', 'queued', 'running')`;
      expect(open).toHaveLength(0);
    }
    // The rounds saw the failure land before, between and after the completions.
    expect(outcomes.size).toBeGreaterThan(1);
  });

  it("compensates a step completed without the run lock between the failure's reads and its write", async () => {
    // A report whose decision fails with an engine error is applied again without the run lock (its event
    // goes to the inbox). Here that happens while the failure's transaction holds the run, after its reads:
    // the failing decision cannot know the step completed, and the step's event is decided after the
    // failure, while the run is compensating.
    let late = 0;
    for (let round = 0; round < 4; round++) {
      const { run, branches } = await startToBranches();
      const step = branches.find((t) => t.nodeId === 's1')!;
      const boom = branches.find((t) => t.nodeId === 'boom')!;
      let calls = 0;
      let atFault: () => void = () => {};
      const stepAtFault = new Promise<void>((r) => (atFault = r));
      let letGo: () => void = () => {};
      const release = new Promise<void>((r) => (letGo = r));
      let stepReport: Promise<unknown> = Promise.resolve();
      const disarm = armFault('report.after-finish', async () => {
        calls++;
        if (calls === 1) {
          // The step's report, holding the run: fail its decision once the failure waits for the lock.
          atFault();
          await release;
          throw new Error('a decision failed (test)');
        }
        // The failure's report, after its reads: the step's report lands, unlocked, before it decides.
        await stepReport;
      });
      try {
        stepReport = report(engines[1]!, [completed(step, 'done')]);
        await stepAtFault;
        const failing = report(engines[2]!, [failed(boom, 'boom', false)]);
        await sleep(50);
        letGo();
        await Promise.all([stepReport, failing]);
      } finally {
        disarm();
      }
      const history0 = await engines[0]!.context.store.readHistory(run.id, 0, 1000);
      const known = history0.find((h) => h.type === 'run.compensating')?.data as { steps: string[] };
      if (!known.steps.includes('s1')) late++;
      const undone = await compensate(run.id);
      expect(undone).toEqual(['s1']);
      expect(await engines[0]!.runs.get(run.id)).toMatchObject({
        status: 'failed',
        error: { compensation: { status: 'completed', compensated: ['s1'] } },
      });
    }
    // The failing decision did not know of the completion at least once: the late path was taken.
    expect(late).toBeGreaterThan(0);
  });

  it('a crash right after the failing commit loses nothing: another engine runs the compensations', async () => {
    const { run, branches } = await startToBranches();
    const steps = branches.filter((t) => t.nodeId !== 'boom');
    await report(engines[1]!, [completed(steps[0]!, 1), completed(steps[1]!, 2)]);
    // The engine that reports the failure dies right after its commit: no wake-up leaves it, and nothing
    // after the commit runs (a WeftError is not retried by the report path).
    const disarm = armFault('report.after-commit', () => {
      throw new WeftError('crash', 'crash after commit');
    });
    try {
      await expect(
        report(engines[2]!, [failed(branches.find((t) => t.nodeId === 'boom')!, 'boom', false)]),
      ).rejects.toThrow('crash after commit');
    } finally {
      disarm();
    }
    await engines[2]!.stop();
    expect((await engines[0]!.runs.get(run.id)).status).toBe('compensating');
    // The first compensation's worker dies too: its lease runs out and the attempt is tried again.
    const [lost] = await eventually(async () => {
      const got = await poll(engines[1]!, ['saga.undo'], 5);
      return got.length > 0 ? got : undefined;
    });
    expect((lost!.input as { step: string }).step).toBe(steps[1]!.nodeId);
    const again = await eventually(
      async () => {
        const got = await poll(engines[1]!, ['saga.undo'], 5);
        return got.length > 0 ? got : undefined;
      },
      10_000,
      'the compensation to be retried after its lease expired',
    );
    expect(again[0]).toMatchObject({ nodeId: lost!.nodeId, attempt: 2 });
    await report(engines[1]!, [completed(again[0]!, 'undone')]);
    const rest = await compensate(run.id);
    expect(rest).toEqual([steps[0]!.nodeId]);
    const final = await engines[0]!.runs.get(run.id);
    expect(final).toMatchObject({
      status: 'failed',
      error: { compensation: { status: 'completed', compensated: [steps[1]!.nodeId, steps[0]!.nodeId] } },
    });
  });
});
