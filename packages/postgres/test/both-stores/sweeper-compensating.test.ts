import { emptyWriteSet, type TaskUpdateRow, type WriteSet } from '@weft/engine';
import { decideRound } from '@weft/engine/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, failed, lease } from '../helpers.js';
import { BOOKING } from './booking.js';
import { STORES, type StoreHarness, storeHarness } from './stores.js';

// The stuck-run sweeper looks at compensating runs too: their compensations are ordinary tasks, so a
// lost report or a lost wake-up strands them like a running run. Planted losses are written through the
// store's own interface, so the same test runs on every store Weft ships.

const writes = (parts: Partial<WriteSet>): WriteSet => ({ ...emptyWriteSet(), ...parts });

describe.each(STORES)('the sweeper and compensating runs on the %s store', (kind) => {
  let h: StoreHarness;
  beforeAll(async () => {
    // Decisions are taken only when the test asks (no background loops), so a planted loss stays lost.
    h = await storeHarness(kind, { backgroundLoops: false });
    await h.engine.definitions.deploy('default', BOOKING);
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Leases the run's one task of `type` and reports it. */
  async function one(runId: string, type: string, outcome: 'fail' | 'ok') {
    const [task] = (await lease(h.engine, [type], 10)).filter((t) => t.runId === runId);
    if (!task) throw new Error(`no ${type} task of run ${runId} to lease`);
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [outcome === 'fail' ? failed(task, 'declined', false) : completed(task, { ref: type })],
    });
    return task;
  }

  /** Decides whatever is due, as the decide loop would. */
  async function decideAll() {
    for (let i = 0; i < 20; i++) {
      await decideRound(h.engine.context);
      if ((await h.store.dueDecisions(10)).length === 0) return;
    }
  }

  /** A run of `booking` whose payment failed: compensating, its first compensation (hotel's) queued. */
  async function compensatingRun(): Promise<string> {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'booking', input: {} });
    await one(run.id, 'book', 'ok');
    await decideAll();
    await one(run.id, 'book', 'ok');
    await decideAll();
    await one(run.id, 'pay', 'fail');
    await decideAll();
    expect((await h.engine.runs.get(run.id)).status).toBe('compensating');
    return run.id;
  }

  /** The compensation attempt of `node`, ended without its report reaching the run (the planted loss). */
  async function loseReport(runId: string, node: string, update: Partial<TaskUpdateRow>) {
    const [task] = (await h.store.listTasks(runId)).filter((t) => t.nodeId === `${node}.compensate`);
    await h.store.transaction(async (tx) => {
      await tx.lockRuns([runId], 'wait');
      await tx.write(
        writes({
          taskUpdates: [
            {
              runId,
              nodeId: `${node}.compensate`,
              iteration: '',
              attempt: task!.attempt,
              expect: 'running',
              status: 'completed',
              ...update,
            },
          ],
        }),
      );
    });
  }

  it('leaves a compensating run alone while its compensation is queued or running', async () => {
    const runId = await compensatingRun();
    expect(await h.engine.sweeper.round(0)).not.toContain(runId);
    const [task] = (await lease(h.engine, ['unbook'], 10)).filter((t) => t.runId === runId);
    expect(task).toBeDefined();
    expect(await h.engine.sweeper.round(0)).not.toContain(runId);
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(task!)] });
  });

  it('repairs a compensating run whose compensation report was lost', async () => {
    const runId = await compensatingRun();
    const [hotel] = (await lease(h.engine, ['unbook'], 10)).filter((t) => t.runId === runId);
    expect(hotel!.nodeId).toBe('hotel.compensate');
    await loseReport(runId, 'hotel', { status: 'completed', output: null });
    expect(await h.engine.sweeper.round(0)).toEqual([runId]);
    const history = await h.store.readHistory(runId, 0, 1000);
    expect(history.find((e) => e.type === 'run.repaired')).toMatchObject({ data: { by: 'sweeper' } });
    // The lost completion was decided: the flight's compensation comes next, and the run ends failed.
    const flight = await one(runId, 'unbook', 'ok');
    expect(flight).toMatchObject({ nodeId: 'flight.compensate', input: { ref: 'book' } });
    await decideAll();
    const run = await h.engine.runs.get(runId);
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({
      node: 'pay',
      compensation: { status: 'completed', compensated: ['hotel', 'flight'] },
    });
    expect(await h.engine.sweeper.round(0)).toEqual([]);
  });

  it('repairs a compensating run whose compensation failure was lost: the rest are given up', async () => {
    const runId = await compensatingRun();
    await lease(h.engine, ['unbook'], 10);
    await loseReport(runId, 'hotel', {
      status: 'failed',
      error: { message: 'the booking system refused', reason: 'error', retryable: false },
    });
    expect(await h.engine.sweeper.round(0)).toEqual([runId]);
    const run = await h.engine.runs.get(runId);
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({
      reason: 'compensation_failed',
      compensation: { status: 'failed', failed: 'hotel', pending: ['flight'] },
    });
  });

  it('starts the compensations of a run whose wake-up to begin them was lost', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'booking', input: {} });
    await one(run.id, 'book', 'ok');
    await decideAll();
    await one(run.id, 'book', 'ok');
    await decideAll();
    await one(run.id, 'pay', 'fail');
    // The failure's decision left the start of compensation in the inbox, with a decision request: lose
    // both, as a store that dropped them would.
    await h.store.transaction(async (tx) => {
      await tx.lockRuns([run.id], 'wait');
      await tx.claimDecisions([run.id]);
      const inbox = await tx.readInbox([run.id]);
      await tx.write(writes({ inboxDone: inbox.map((i) => ({ runId: run.id, id: i.id })) }));
    });
    expect((await h.engine.runs.get(run.id)).status).toBe('compensating');
    expect((await h.store.listTasks(run.id)).some((t) => t.nodeId.endsWith('.compensate'))).toBe(false);
    expect(await h.engine.sweeper.round(0)).toEqual([run.id]);
    await one(run.id, 'unbook', 'ok');
    await decideAll();
    await one(run.id, 'unbook', 'ok');
    await decideAll();
    expect((await h.engine.runs.get(run.id)).status).toBe('failed');
  });

  it('never repairs a compensating run while another transaction is deciding it', async () => {
    const runId = await compensatingRun();
    const [hotel] = (await lease(h.engine, ['unbook'], 10)).filter((t) => t.runId === runId);
    await loseReport(runId, 'hotel', { status: 'completed', output: null });
    // The lost report turns up after all: a transaction (on a connection of its own for PostgreSQL) holds
    // the run, puts the completion in its inbox and asks for a decision, and commits only after a sweeper
    // round ran alongside. The sweeper must leave the run to it: skipped while locked, or found not stuck
    // once the lock is released.
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let locked: () => void = () => {};
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    const holder = h.store.transaction(async (tx) => {
      await tx.lockRuns([runId], 'wait');
      await tx.appendInbox([
        {
          runId,
          event: {
            kind: 'node_completed',
            nodeId: 'hotel.compensate',
            iteration: '',
            attempt: hotel!.attempt,
          },
        },
      ]);
      await tx.write(writes({ decisionRequests: [runId] }));
      locked();
      await held;
    });
    await isLocked;
    const sweeping = h.engine.sweeper.round(0);
    await new Promise((r) => setTimeout(r, 100));
    release();
    await holder;
    expect(await sweeping).toEqual([]);
    await decideAll();
    const history = await h.store.readHistory(runId, 0, 1000);
    expect(history.some((e) => e.type === 'run.repaired')).toBe(false);
    const flight = await one(runId, 'unbook', 'ok');
    expect(flight.nodeId).toBe('flight.compensate');
    await decideAll();
    expect((await h.engine.runs.get(runId)).status).toBe('failed');
  });

  it('finds nothing once every compensating run has ended or has work in flight', async () => {
    await eventually(async () => ((await h.engine.sweeper.round(0)).length === 0 ? true : undefined));
    expect(await h.engine.sweeper.round(0)).toEqual([]);
  });
});
