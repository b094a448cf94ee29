import { uuidv7 } from '@weft/engine/internal';
import { describe, expect, it } from 'vitest';
import {
  deploy,
  type Fixture,
  freshNamespace,
  insertRun,
  lease,
  leaseRequest,
  newRun,
  queueTask,
  sleep,
  writes,
} from './store-fixtures.js';

const event = (runId: string, seq: number, type = 'test.event') => ({
  runId,
  seq,
  type,
  nodeId: null,
  iteration: null,
  attempt: null,
  data: { seq },
});

/** Runs, idempotency keys, the history sequence and rollback. */
export function runTests(fixture: () => Fixture): void {
  describe('runs', () => {
    it('inserts runs running and locked, lists them newest first by pages, counts them', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const def = await deploy(store, ns);
      // Run ids are time-ordered: later ids for later runs.
      const ids = [0, 1, 2].map((i) => uuidv7(Date.now() + i));
      const inserted = await store.transaction((tx) => tx.insertRuns(ids.map((id) => newRun(def, id))));
      expect(inserted.map((r) => [r.id, r.status, r.lastSeq, r.definitionVersion])).toEqual(
        ids.map((id) => [id, 'running', 0, 1]),
      );
      expect(inserted[0]!.now).toBeInstanceOf(Date);
      expect(await store.getRun(ids[0]!)).toMatchObject({
        id: ids[0],
        input: { n: 1 },
        output: null,
        vars: {},
      });
      const first = await store.listRuns({ namespace: ns, limit: 2 });
      expect(first.items.map((r) => r.id)).toEqual([ids[2], ids[1]]);
      const second = await store.listRuns({ namespace: ns, limit: 2, cursor: first.next! });
      expect([second.items.map((r) => r.id), second.next]).toEqual([[ids[0]], null]);
      expect(await store.countRuns(ns)).toEqual({ running: 3 });
      await expect(store.listRuns({ namespace: ns, limit: 2, cursor: 'nonsense' })).rejects.toThrow(/cursor/);
    });

    it('an idempotency key goes to one of several concurrent starts; the others insert nothing', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const def = await deploy(store, ns);
      const peers = await fixture().peers(5);
      const ids = peers.map(() => uuidv7());
      const inserted = await Promise.all(
        peers.map((peer, i) =>
          peer.transaction(async (tx) => {
            const row = { namespace: ns, key: 'order-1', runId: ids[i]!, definitionName: def.name };
            await tx.claimIdempotencyKeys([row]);
            await sleep(20);
            return tx.insertRuns([newRun(def, ids[i]!, { idempotencyKey: 'order-1' })]);
          }),
        ),
      );
      const winners = inserted.flat();
      expect(winners).toHaveLength(1);
      expect(await store.getIdempotentRuns([{ namespace: ns, key: 'order-1' }])).toEqual([
        { namespace: ns, key: 'order-1', runId: winners[0]!.id, definitionName: def.name },
      ]);
      expect(await store.countRuns(ns)).toEqual({ running: 1 });
    });

    it('a released key can be claimed again', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const row = { namespace: ns, key: 'k', runId: uuidv7(), definitionName: 'd' };
      expect(await store.transaction((tx) => tx.claimIdempotencyKeys([row]))).toEqual([
        { namespace: ns, key: 'k' },
      ]);
      expect(await store.transaction((tx) => tx.claimIdempotencyKeys([{ ...row, runId: uuidv7() }]))).toEqual(
        [],
      );
      await store.transaction((tx) => tx.releaseIdempotencyKeys([{ namespace: ns, key: 'k' }]));
      expect(await store.getIdempotentRuns([{ namespace: ns, key: 'k' }])).toEqual([]);
      expect(await store.transaction((tx) => tx.claimIdempotencyKeys([row]))).toHaveLength(1);
    });

    it('runs started by nodes are deduplicated on their start key', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const def = await deploy(store, ns);
      const parent = await insertRun(store, def);
      const child = (id: string) => ({
        ...newRun(def, id),
        parent: { runId: parent, nodeId: 'a', iteration: '', attempt: 1, detached: false },
        startKey: `${parent}/a//1`,
      });
      const first = await store.transaction((tx) => tx.insertChildRuns([child(uuidv7())]));
      const again = await store.transaction((tx) => tx.insertChildRuns([child(uuidv7())]));
      expect([first.length, again.length]).toEqual([1, 0]);
      expect((await store.getRun(first[0]!.id))?.parent).toEqual({
        runId: parent,
        nodeId: 'a',
        iteration: '',
        attempt: 1,
        detached: false,
      });
    });
  });

  describe('history sequence', () => {
    it('is gap-free and unique when writers holding the run lock append concurrently', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const runId = await insertRun(store, await deploy(store, ns));
      const peers = await fixture().peers(6);
      await Promise.all(
        peers.map((peer) =>
          peer.transaction(async (tx) => {
            const [run] = await tx.lockRuns([runId], 'wait');
            await sleep(10);
            await tx.write(writes({ history: [event(runId, run!.lastSeq + 1)] }), { commit: true });
          }),
        ),
      );
      const history = await store.readHistory(runId, 0, 100);
      expect(history.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(await store.readHistory(runId, 4, 1)).toMatchObject([{ seq: 5, data: { seq: 5 } }]);
      const [locked] = await store.transaction((tx) => tx.lockRuns([runId], 'wait'));
      expect(locked!.lastSeq).toBe(6);
    });

    it('refuses a sequence number the run already has', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const runId = await insertRun(store, await deploy(store, ns));
      await store.transaction((tx) => tx.write(writes({ history: [event(runId, 1)] })));
      await expect(
        store.transaction((tx) => tx.write(writes({ history: [event(runId, 1, 'dup')] }))),
      ).rejects.toThrow();
      expect((await store.readHistory(runId, 0, 10)).map((e) => e.type)).toEqual(['test.event']);
    });
  });

  describe('progress', () => {
    it('counts the progress of the history it writes, and a finished run has nothing running', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const runId = await insertRun(store, await deploy(store, ns));
      const at = (type: string, seq: number, nodeId: string, attempt: number, data: object = {}) => ({
        runId,
        seq,
        type,
        nodeId,
        iteration: '',
        attempt,
        data: data as never,
      });
      await store.transaction(async (tx) => {
        await tx.lockRuns([runId], 'wait');
        await tx.write(
          writes({
            history: [
              at('task.scheduled', 1, 'a', 1),
              at('task.scheduled', 2, 'b', 1),
              at('task.failed', 3, 'b', 1, { final: false }),
              at('task.scheduled', 4, 'b', 2, { retry: true }),
              at('task.completed', 5, 'a', 1),
            ],
          }),
          { commit: true },
        );
      });
      expect((await store.getRun(runId))?.progress).toEqual({
        known: 2,
        completed: 1,
        failed: 0,
        running: 1,
      });
      await store.transaction(async (tx) => {
        await tx.lockRuns([runId], 'wait');
        await tx.write(
          writes({
            runUpdates: [{ runId, status: 'failed', finished: true }],
            history: [at('task.failed', 6, 'b', 2, { final: true })],
          }),
          { commit: true },
        );
      });
      expect((await store.getRun(runId))?.progress).toEqual({
        known: 2,
        completed: 1,
        failed: 1,
        running: 0,
      });
    });
  });

  describe('transactions', () => {
    it('a transaction that throws leaves nothing behind', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const def = await deploy(store, ns);
      const runId = await insertRun(store, def);
      const queued = await queueTask(store, runId, ns);
      const newId = uuidv7();
      const boom = new Error('boom');
      await expect(
        store.transaction(async (tx) => {
          await tx.claimIdempotencyKeys([
            { namespace: ns, key: 'rolled', runId: newId, definitionName: def.name },
          ]);
          await tx.insertRuns([newRun(def, newId, { idempotencyKey: 'rolled' })]);
          await tx.lockRuns([runId], 'wait');
          await tx.claimDecisions([runId]);
          await tx.leaseTasks(leaseRequest(ns));
          await tx.write(
            writes({
              history: [event(runId, 1)],
              timers: [
                {
                  id: uuidv7(),
                  runId,
                  dueAt: new Date(0),
                  purpose: { kind: 'wait', nodeId: 'a', iteration: '', attempt: 1 },
                },
              ],
              runUpdates: [{ runId, status: 'completed', output: 'x', finished: true }],
              inboxAppend: [
                { runId, event: { kind: 'node_completed', nodeId: 'a', iteration: '', attempt: 1 } },
              ],
              decisionRequests: [runId],
            }),
          );
          await tx.setLimits([{ namespace: ns, kind: 'quota', name: '', max: 1, windowMs: null }]);
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await store.getRun(newId)).toBeNull();
      expect(await store.getIdempotentRuns([{ namespace: ns, key: 'rolled' }])).toEqual([]);
      expect(await store.getRun(runId)).toMatchObject({ status: 'running', output: null });
      expect(await store.readHistory(runId, 0, 10)).toEqual([]);
      expect((await store.dueTimers(10_000)).filter((t) => t.runId === runId)).toEqual([]);
      expect(await store.dueDecisions(10_000)).not.toContain(runId);
      expect(await store.listLimits(ns)).toEqual([]);
      expect(await store.transaction((tx) => tx.readInbox([runId]))).toEqual([]);
      // The lease was undone too: the task is still queued, with its queue row.
      expect((await lease(store, leaseRequest(ns))).map((t) => t.id)).toEqual([queued.taskId]);
    });

    it('refuses operations once a write committed, and keeps what it committed', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const runId = await insertRun(store, await deploy(store, ns));
      const refusals = await store.transaction(async (tx) => {
        await tx.lockRuns([runId], 'wait');
        await tx.write(writes({ history: [event(runId, 1)] }), { commit: true });
        // Each would run outside the transaction, without its locks: refused, at once or as a rejection.
        const attempts: (() => Promise<unknown>)[] = [
          () => tx.claimDecisions([runId]),
          () => tx.readInbox([runId]),
          () => tx.write(writes({ history: [event(runId, 2)] })),
        ];
        return Promise.all(
          attempts.map((attempt) =>
            Promise.resolve()
              .then(attempt)
              .then(
                () => null,
                (e: unknown) => e,
              ),
          ),
        );
      });
      expect(refusals).toHaveLength(3);
      for (const refusal of refusals) expect(refusal).toMatchObject({ code: 'transaction_ended' });
      expect((await store.readHistory(runId, 0, 10)).map((e) => e.seq)).toEqual([1]);
    });
  });
}
