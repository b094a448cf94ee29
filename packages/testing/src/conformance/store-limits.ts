import { uuidv7 } from '@weft/engine/internal';
import { describe, expect, it } from 'vitest';
import {
  completion,
  deploy,
  type Fixture,
  freshNamespace,
  insertRun,
  lease,
  leaseRequest,
  newRun,
  queueTask,
  sleep,
} from './store-fixtures.js';

/** Limits: concurrency caps, semaphores, rate limits and quotas of running runs. */
export function limitTests(fixture: () => Fixture): void {
  async function setup() {
    const { store } = fixture();
    const ns = freshNamespace();
    const def = await deploy(store, ns);
    const runId = await insertRun(store, def);
    return { store, ns, def, runId };
  }

  describe('limits', () => {
    it('are created, replaced, listed and deleted', async () => {
      const { store, ns } = await setup();
      await store.transaction((tx) =>
        tx.setLimits([
          { namespace: ns, kind: 'concurrency', name: 'work', max: 3, windowMs: null },
          { namespace: ns, kind: 'rate', name: 'mail', max: 10, windowMs: 1000 },
        ]),
      );
      await store.transaction((tx) =>
        tx.setLimits([{ namespace: ns, kind: 'concurrency', name: 'work', max: 4, windowMs: null }]),
      );
      expect((await store.listLimits(ns)).map((l) => [l.kind, l.name, l.max, l.windowMs])).toEqual([
        ['concurrency', 'work', 4, null],
        ['rate', 'mail', 10, 1000],
      ]);
      expect(await store.transaction((tx) => tx.deleteLimit(ns, 'rate', 'mail'))).toBe(true);
      expect(await store.transaction((tx) => tx.deleteLimit(ns, 'rate', 'mail'))).toBe(false);
      expect((await store.limitUsage(ns)).map((l) => [l.name, l.used])).toEqual([['work', 0]]);
    });

    it('a concurrency cap holds under concurrent leasers, and a report frees its slot', async () => {
      const { store, ns, runId } = await setup();
      await store.transaction((tx) =>
        tx.setLimits([{ namespace: ns, kind: 'concurrency', name: 'work', max: 2, windowMs: null }]),
      );
      for (let i = 0; i < 6; i++) await queueTask(store, runId, ns, { nodeId: `n${i}` });
      const peers = await fixture().peers(6);
      const leased = (
        await Promise.all(
          peers.map((peer, i) =>
            peer.transaction(async (tx) => {
              const { tasks } = await tx.leaseTasks(leaseRequest(ns, { worker: `w${i}`, max: 2 }));
              await sleep(40);
              return tasks;
            }),
          ),
        )
      ).flat();
      expect(leased).toHaveLength(2);
      expect((await store.limitUsage(ns)).find((l) => l.name === 'work')?.used).toBe(2);
      expect(await lease(store, leaseRequest(ns, { max: 5 }))).toEqual([]);
      await store.transaction((tx) => tx.finishTasks([completion(leased[0]!)]));
      expect(await lease(store, leaseRequest(ns, { max: 5 }))).toHaveLength(1);
    });

    it('semaphore permits are taken all or nothing; a refused task stays queued', async () => {
      const { store, ns, runId } = await setup();
      await store.transaction((tx) =>
        tx.setLimits([{ namespace: ns, kind: 'semaphore', name: 'db', max: 3, windowMs: null }]),
      );
      const tasks = [];
      for (let i = 0; i < 2; i++)
        tasks.push(await queueTask(store, runId, ns, { nodeId: `s${i}`, gates: { 'semaphore:db': 2 } }));
      const got = await lease(store, leaseRequest(ns, { max: 5 }));
      expect(got.map((t) => t.id)).toEqual([tasks[0]!.taskId]);
      expect((await store.limitUsage(ns))[0]).toMatchObject({ name: 'db', used: 2 });
      await store.transaction((tx) => tx.finishTasks([completion(got[0]!)]));
      expect((await lease(store, leaseRequest(ns, { max: 5 }))).map((t) => t.id)).toEqual([tasks[1]!.taskId]);
    });

    it('semaphore permits hold under concurrent leasers of different task types', async () => {
      const { store, ns, runId } = await setup();
      await store.transaction((tx) =>
        tx.setLimits([{ namespace: ns, kind: 'semaphore', name: 'db', max: 1, windowMs: null }]),
      );
      // Each leaser asks for its own task type, so no two of them compete for a queue row: only the
      // semaphore's count stands between them.
      const types = ['t0', 't1', 't2', 't3'];
      for (const taskType of types)
        await queueTask(store, runId, ns, { nodeId: taskType, taskType, gates: { 'semaphore:db': 1 } });
      const peers = await fixture().peers(types.length);
      const leased = (
        await Promise.all(
          peers.map((peer, i) =>
            peer.transaction(async (tx) => {
              const { tasks } = await tx.leaseTasks(
                leaseRequest(ns, { taskTypes: [types[i]!], worker: `w${i}` }),
              );
              await sleep(40);
              return tasks;
            }),
          ),
        )
      ).flat();
      expect(leased).toHaveLength(1);
      expect((await store.limitUsage(ns))[0]).toMatchObject({ name: 'db', used: 1 });
    });

    it('one fast round leases tasks under no limit, and leaves every task when one under a limit waits', async () => {
      const { store, ns, runId } = await setup();
      await store.transaction((tx) =>
        tx.setLimits([{ namespace: ns, kind: 'semaphore', name: 'db', max: 1, windowMs: null }]),
      );
      const free = await queueTask(store, runId, ns, { nodeId: 'free' });
      const round = await store.transaction((tx) => tx.leaseFastRound(leaseRequest(ns, { max: 5 })));
      expect(round).toMatchObject({ taken: 1, gated: false });
      expect(round.tasks.map((t) => t.id)).toEqual([free.taskId]);
      // A task under a limit waits: the round takes nothing (only the gated path counts limits) and says so.
      await queueTask(store, runId, ns, { nodeId: 'gated', gates: { 'semaphore:db': 1 } });
      await queueTask(store, runId, ns, { nodeId: 'free2' });
      const next = await store.transaction((tx) => tx.leaseFastRound(leaseRequest(ns, { max: 5 })));
      expect(next).toMatchObject({ tasks: [], taken: 0, gated: true });
      expect(await lease(store, leaseRequest(ns, { max: 5 }))).toHaveLength(2);
    });

    it('a rate limit admits its number of starts per window and says when to try again', async () => {
      const { store, ns, runId } = await setup();
      await store.transaction((tx) =>
        tx.setLimits([{ namespace: ns, kind: 'rate', name: 'mail', max: 1, windowMs: 60_000 }]),
      );
      for (let i = 0; i < 2; i++)
        await queueTask(store, runId, ns, { nodeId: `r${i}`, gates: { 'rate:mail': 1 } });
      const first = await store.transaction((tx) => tx.leaseTasks(leaseRequest(ns, { max: 5 })));
      expect(first.tasks).toHaveLength(1);
      // The second start waits for the window: it is held back, and the lease says until when.
      const second = await store.transaction((tx) => tx.leaseTasks(leaseRequest(ns, { max: 5 })));
      expect(second.tasks).toEqual([]);
      expect(second.retryAt!.getTime()).toBeGreaterThan(Date.now() + 30_000);
      expect((await store.limitUsage(ns))[0]).toMatchObject({ name: 'mail', used: 1 });
    });

    it('a quota of running runs holds under concurrent starts', async () => {
      const { store, ns, def } = await setup();
      await store.transaction((tx) =>
        tx.setLimits([{ namespace: ns, kind: 'quota', name: '', max: 3, windowMs: null }]),
      );
      // One run is running already (setup); two more fit.
      const peers = await fixture().peers(5);
      const started = await Promise.all(
        peers.map((peer) =>
          peer.transaction(async (tx) => {
            await tx.lockQuotas([ns]);
            const runs = await tx.insertRuns([newRun(def, uuidv7())]);
            await sleep(30);
            return runs;
          }),
        ),
      );
      expect(started.flat()).toHaveLength(2);
      expect(await store.transaction((tx) => tx.quotaUsage([ns]))).toEqual([
        { namespace: ns, max: 3, used: 3 },
      ]);
      const more = await store.transaction((tx) =>
        tx.insertRuns([newRun(def, uuidv7()), newRun(def, uuidv7())]),
      );
      expect(more).toEqual([]);
    });
  });
}
