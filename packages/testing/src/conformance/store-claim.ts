import type { LeasedTask } from '@weft/engine';
import { describe, expect, it } from 'vitest';
import {
  completion,
  deploy,
  type Fixture,
  freshNamespace,
  insertRun,
  lease,
  leaseRequest,
  queueTask,
  sleep,
  taskRow,
  writes,
} from './store-fixtures.js';

/** How long a test transaction stays open after its claim, so that concurrent ones overlap it. */
const HOLD_MS = 40;

/**
 * The claim contract: leasing (queued → running with a fresh fencing token) is the claim. It is atomic
 * and tells the caller whether it won; a report must carry the token and is refused otherwise.
 */
export function claimTests(fixture: () => Fixture): void {
  async function setup() {
    const { store } = fixture();
    const ns = freshNamespace();
    const def = await deploy(store, ns);
    const runId = await insertRun(store, def);
    return { store, ns, runId };
  }

  describe('the claim (leasing)', () => {
    it('moves a queued task to running with a fresh lease token; a second lease gets nothing', async () => {
      const { store, ns, runId } = await setup();
      const queued = await queueTask(store, runId, ns);
      const [leased, ...more] = await lease(store, leaseRequest(ns, { worker: 'w1', leaseMs: 60_000 }));
      expect(more).toEqual([]);
      expect(leased).toMatchObject({ id: queued.taskId, runId, nodeId: 'a', attempt: 1, taskType: 'work' });
      expect(leased!.leaseToken).toMatch(/^[0-9a-f-]{36}$/);
      expect(leased!.leaseExpiresAt.getTime()).toBeGreaterThan(Date.now() + 30_000);
      expect(await taskRow(store, runId, queued.taskId)).toMatchObject({ status: 'running', worker: 'w1' });
      expect(await lease(store, leaseRequest(ns))).toEqual([]);
    });

    it('hands out the highest priority first, then the oldest; not a task before its delay', async () => {
      const { store, ns, runId } = await setup();
      const low = await queueTask(store, runId, ns, { nodeId: 'low', priority: 1 });
      const high = await queueTask(store, runId, ns, { nodeId: 'high', priority: 5 });
      const later = await queueTask(store, runId, ns, { nodeId: 'later', priority: 9, delayMs: 60_000 });
      const got = await lease(store, leaseRequest(ns, { max: 5 }));
      expect(got.map((t) => t.id)).toEqual([high.taskId, low.taskId]);
      expect((await taskRow(store, runId, later.taskId))?.status).toBe('queued');
    });

    it('of several concurrent claimers of one task exactly one wins; the others learn they lost', async () => {
      const { store, ns, runId } = await setup();
      // Three queue rows for one task: a wake-up may be duplicated, the claim must not be.
      const queued = await queueTask(store, runId, ns, { copies: 3 });
      const peers = await fixture().peers(6);
      const results = await Promise.all(
        peers.map((peer, i) =>
          peer.transaction(async (tx) => {
            const { tasks } = await tx.leaseTasks(leaseRequest(ns, { worker: `w${i}` }));
            await sleep(HOLD_MS);
            return tasks;
          }),
        ),
      );
      const winners = results.flatMap((tasks, i) => tasks.map((t) => ({ worker: `w${i}`, t })));
      expect(winners.map((w) => w.t.id)).toEqual([queued.taskId]);
      expect(results.filter((tasks) => tasks.length === 0)).toHaveLength(5);
      expect(await taskRow(store, runId, queued.taskId)).toMatchObject({
        status: 'running',
        worker: winners[0]!.worker,
      });
    });

    it('of several concurrent claimers naming one task by id exactly one wins', async () => {
      const { store, ns, runId } = await setup();
      // Announced by a message from outside the store (no table queue row), named by every claimer.
      const queued = await queueTask(store, runId, ns, { copies: 0 });
      const peers = await fixture().peers(6);
      const results = await Promise.all(
        peers.map((peer, i) =>
          peer.transaction(async (tx) => {
            const out = await tx.leaseTasksById(leaseRequest(ns, { worker: `w${i}` }), [
              { runId, taskId: queued.taskId, attempt: 1 },
            ]);
            await sleep(HOLD_MS);
            return out.tasks;
          }),
        ),
      );
      expect(results.flat().map((t) => t.id)).toEqual([queued.taskId]);
      expect(results.filter((tasks) => tasks.length === 0)).toHaveLength(5);
    });

    it('leasing a task and cancelling its run do not both win: a cancelled task is not leased', async () => {
      const { store, ns, runId } = await setup();
      const queued = await queueTask(store, runId, ns);
      await store.transaction(async (tx) => {
        await tx.lockRuns([runId], 'wait');
        await tx.write(writes({ cancelOpenWork: [{ runId, reason: 'test', mode: 'cancel' }] }));
      });
      expect(await lease(store, leaseRequest(ns))).toEqual([]);
      expect(await taskRow(store, runId, queued.taskId)).toMatchObject({
        status: 'cancelled',
        error: { reason: 'cancelled', message: 'test' },
      });
    });
  });

  describe('fencing', () => {
    async function leased() {
      const { store, ns, runId } = await setup();
      await queueTask(store, runId, ns);
      const [task] = await lease(store, leaseRequest(ns));
      return { store, ns, runId, task: task! };
    }

    it('refuses a report with a stale or forged token, then accepts the holder’s, then refuses a repeat', async () => {
      const { store, task } = await leased();
      const forged = { ...completion(task, 'forged'), leaseToken: '00000000-0000-4000-8000-000000000000' };
      const [refused] = await store.transaction((tx) => tx.finishTasks([forged]));
      expect(refused).toMatchObject({
        taskId: task.id,
        accepted: false,
        why: 'the lease token does not match: the lease was lost or taken over',
        nodeId: 'a',
        attempt: 1,
      });
      const [ok] = await store.transaction((tx) => tx.finishTasks([completion(task, 'real')]));
      // A store may add the task's type and how long it ran (for metrics); when it does, they are right.
      expect(ok).toMatchObject({ taskId: task.id, accepted: true, nodeId: 'a', iteration: '', attempt: 1 });
      if (ok?.accepted && ok.ranSeconds !== undefined) {
        expect(ok.taskType).toBe(task.taskType);
        expect(ok.ranSeconds).toBeGreaterThanOrEqual(0);
      }
      const [again] = await store.transaction((tx) => tx.finishTasks([completion(task, 'again')]));
      expect(again).toMatchObject({ accepted: false, why: 'the task is already completed' });
      expect(await taskRow(store, task.runId, task.id)).toMatchObject({
        status: 'completed',
        output: 'real',
      });
    });

    it('in one batch, a stale report and the holder’s on the same task get their own verdicts', async () => {
      for (const staleFirst of [true, false]) {
        const { store, task } = await leased();
        const real = completion(task, 'real');
        const stale = { ...completion(task, 'stale'), leaseToken: '00000000-0000-4000-8000-000000000000' };
        const verdicts = await store.transaction((tx) =>
          tx.finishTasks(staleFirst ? [stale, real] : [real, stale]),
        );
        expect(verdicts.map((v) => v.accepted)).toEqual(staleFirst ? [false, true] : [true, false]);
        expect((await taskRow(store, task.runId, task.id))?.output).toBe('real');
      }
    });

    it('of concurrent reports with the holder’s token exactly one is accepted', async () => {
      const { store, task } = await leased();
      const peers = await fixture().peers(5);
      const verdicts = await Promise.all(
        peers.map((peer, i) =>
          peer.transaction(async (tx) => {
            const [v] = await tx.finishTasks([completion(task, `report ${i}`)]);
            await sleep(HOLD_MS);
            return v!;
          }),
        ),
      );
      expect(verdicts.filter((v) => v.accepted)).toHaveLength(1);
      const winner = verdicts.findIndex((v) => v.accepted);
      expect((await taskRow(store, task.runId, task.id))?.output).toBe(`report ${winner}`);
    });

    it('says why a report is refused: no such task, another namespace, another attempt', async () => {
      const { store, task } = await leased();
      const verdict = async (report: ReturnType<typeof completion>, namespace?: string) =>
        (await store.transaction((tx) => tx.finishTasks([report], namespace)))[0]!;
      const none = await verdict({ ...completion(task), taskId: '00000000-0000-4000-8000-000000000001' });
      const otherNs = await verdict(completion(task), 'elsewhere');
      const otherAttempt = await verdict({ ...completion(task), attempt: 2 });
      expect(none).toMatchObject({ accepted: false, why: expect.stringContaining('no task') });
      expect(otherNs).toMatchObject({
        accepted: false,
        why: expect.stringContaining('belongs to namespace'),
      });
      expect(otherAttempt).toMatchObject({
        accepted: false,
        why: `the report names attempt 2, but task ${task.id} is attempt 1`,
      });
      expect((await taskRow(store, task.runId, task.id))?.status).toBe('running');
    });

    it('refuses a report after the attempt’s timeout, even with the right token', async () => {
      const { store, ns, runId } = await setup();
      await queueTask(store, runId, ns, { timeoutMs: 50 });
      const [task] = await lease(store, leaseRequest(ns));
      expect(task!.deadlineAt).not.toBeNull();
      await sleep(120);
      const [late] = await store.transaction((tx) => tx.finishTasks([completion(task!)]));
      expect(late).toMatchObject({ accepted: false, why: "the attempt's timeout has passed" });
    });
  });

  describe('lease expiry', () => {
    async function leasedFor(leaseMs: number, timeoutMs: number | null = null) {
      const { store, ns, runId } = await setup();
      await queueTask(store, runId, ns, { timeoutMs });
      const [task] = await lease(store, leaseRequest(ns, { leaseMs, worker: 'sleepy' }));
      return { store, ns, task: task! };
    }
    const expiredIds = async (f: Fixture) => (await f.store.expiredLeases(10_000)).map((e) => e.taskId);

    it('ends an attempt whose lease ran out, once, however many reapers race; its report is refused', async () => {
      // Long enough that even a loaded machine looks before it runs out.
      const { store, task } = await leasedFor(1000);
      expect(await expiredIds(fixture())).not.toContain(task.id);
      expect(
        await store.transaction((tx) => tx.expireLeases([{ runId: task.runId, taskId: task.id }])),
      ).toEqual([]);
      await sleep(1100);
      expect(await expiredIds(fixture())).toContain(task.id);
      const peers = await fixture().peers(4);
      const ended = await Promise.all(
        peers.map((peer) =>
          peer.transaction(async (tx) => {
            const out = await tx.expireLeases([{ runId: task.runId, taskId: task.id }]);
            await sleep(HOLD_MS);
            return out;
          }),
        ),
      );
      expect(ended.flat()).toEqual([
        {
          runId: task.runId,
          taskId: task.id,
          nodeId: 'a',
          iteration: '',
          attempt: 1,
          timedOut: false,
          worker: 'sleepy',
        },
      ]);
      expect(await taskRow(store, task.runId, task.id)).toMatchObject({
        status: 'timed_out',
        error: { reason: 'lease_expired', retryable: true },
      });
      const [late] = await store.transaction((tx) => tx.finishTasks([completion(task)]));
      expect(late).toMatchObject({ accepted: false, why: 'the task is already timed out' });
      expect(await expiredIds(fixture())).not.toContain(task.id);
      // A reaper that comes later (its list read before the attempt ended) finds nothing to end.
      expect(
        await store.transaction((tx) => tx.expireLeases([{ runId: task.runId, taskId: task.id }])),
      ).toEqual([]);
    });

    it('an attempt past its own timeout ends as a timeout, not a lost lease', async () => {
      const { store, task } = await leasedFor(60_000, 50);
      await sleep(120);
      const [ended] = await store.transaction((tx) =>
        tx.expireLeases([{ runId: task.runId, taskId: task.id }]),
      );
      expect(ended).toMatchObject({ taskId: task.id, timedOut: true });
      expect((await taskRow(store, task.runId, task.id))?.error).toMatchObject({ reason: 'timeout' });
    });

    it('renewing keeps a lease held; a renewal with a stale token is refused', async () => {
      const { store, task } = await leasedFor(150);
      const stale: LeasedTask = { ...task, leaseToken: '00000000-0000-4000-8000-000000000002' };
      const held = await store.transaction((tx) =>
        tx.renewLeases(
          [task, stale].map((t) => ({
            runId: t.runId,
            taskId: t.id,
            attempt: t.attempt,
            leaseToken: t.leaseToken,
          })),
          60_000,
        ),
      );
      expect(held).toEqual([task.id]);
      await sleep(250);
      expect(await expiredIds(fixture())).not.toContain(task.id);
      const nothing = await store.transaction((tx) =>
        tx.expireLeases([{ runId: task.runId, taskId: task.id }]),
      );
      expect(nothing).toEqual([]);
      const [ok] = await store.transaction((tx) => tx.finishTasks([completion(task)]));
      expect(ok?.accepted).toBe(true);
    });
  });
}
