import type { RunEvent } from '@weft/core';
import { uuidv7 } from '@weft/engine/internal';
import { describe, expect, it } from 'vitest';
import { deploy, type Fixture, freshNamespace, insertRun, sleep, writes } from './store-fixtures.js';

const completedEvent = (nodeId: string): RunEvent => ({
  kind: 'node_completed',
  nodeId,
  iteration: '',
  attempt: 1,
});

/** The decide queue, run inboxes, timers and signal mailboxes. */
export function decisionTests(fixture: () => Fixture): void {
  async function runs(n: number) {
    const { store } = fixture();
    const def = await deploy(store, freshNamespace());
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(await insertRun(store, def));
    return { store, ids };
  }
  const mine = async (ids: string[]) =>
    (await fixture().store.dueDecisions(100_000)).filter((id) => ids.includes(id)).sort();

  describe('decide queue', () => {
    it('keeps one request per run; a claim takes it once; a delayed one is not due yet', async () => {
      const { store, ids } = await runs(3);
      const [a, b, c] = ids as [string, string, string];
      await store.transaction((tx) => tx.requestDecisions([a, a, b], 'test'));
      await store.transaction((tx) => tx.requestDecisions([a, c], 'later', 60_000));
      await store.transaction((tx) => tx.requestDecisions([uuidv7()], 'no such run'));
      expect(await mine(ids)).toEqual([a, b].sort());
      const claimed = await store.transaction((tx) => tx.claimDecisions([a, b, c]));
      expect(claimed.sort()).toEqual([a, b, c].sort());
      expect(await store.transaction((tx) => tx.claimDecisions([a, b, c]))).toEqual([]);
    });

    it('a claim rolled back puts the request back', async () => {
      const { store, ids } = await runs(1);
      await store.transaction((tx) => tx.requestDecisions(ids, 'test'));
      await expect(
        store.transaction(async (tx) => {
          expect(await tx.claimDecisions(ids)).toEqual(ids);
          throw new Error('the decision failed');
        }),
      ).rejects.toThrow('the decision failed');
      expect(await mine(ids)).toEqual(ids);
    });

    it('a deferred decision backs off, and a new request does not cut its backoff short', async () => {
      const { store, ids } = await runs(1);
      await store.transaction((tx) => tx.deferDecision(ids[0]!, 'boom', 60_000));
      await store.transaction((tx) => tx.requestDecisions(ids, 'an event'));
      expect(await mine(ids)).toEqual([]);
      expect(await store.transaction((tx) => tx.claimDecisions(ids))).toEqual(ids);
    });

    it('a claim waits for a request in progress and then sees what that transaction wrote', async () => {
      const { store, ids } = await runs(1);
      const runId = ids[0]!;
      await store.transaction((tx) => tx.requestDecisions([runId], 'earlier'));
      const [reporter, decider] = await fixture().peers(2);
      let requested!: () => void;
      const requestHeld = new Promise<void>((r) => {
        requested = r;
      });
      const reporting = reporter!.transaction(async (tx) => {
        await tx.requestDecisions([runId], 'a report');
        requested();
        await sleep(150);
        await tx.appendInbox([{ runId, event: completedEvent('a') }]);
      });
      await requestHeld;
      const seen = await decider!.transaction(async (tx) => {
        const claimed = await tx.claimDecisions([runId]);
        return { claimed, inbox: await tx.readInbox([runId]) };
      });
      await reporting;
      // Either the claim came after the report (and sees its event) or the report's request is still due.
      if (seen.claimed.length > 0) expect(seen.inbox.map((i) => i.event)).toEqual([completedEvent('a')]);
      else expect(await mine(ids)).toEqual(ids);
    });
  });

  describe('inbox', () => {
    it('gives each run its events in arrival order; consumed events are gone', async () => {
      const { store, ids } = await runs(2);
      const [a, b] = ids as [string, string];
      for (const node of ['1', '2', '3'])
        await store.transaction((tx) =>
          tx.appendInbox([
            { runId: a, event: completedEvent(`a${node}`) },
            { runId: b, event: completedEvent(`b${node}`) },
          ]),
        );
      const items = await store.transaction((tx) => tx.readInbox([b, a]));
      const of = (runId: string) =>
        items.filter((i) => i.runId === runId).map((i) => (i.event as { nodeId: string }).nodeId);
      expect([of(a), of(b)]).toEqual([
        ['a1', 'a2', 'a3'],
        ['b1', 'b2', 'b3'],
      ]);
      const firstOfA = items.find((i) => i.runId === a)!;
      await store.transaction((tx) => tx.write(writes({ inboxDone: [{ runId: a, id: firstOfA.id }] })));
      const left = await store.transaction((tx) => tx.readInbox([a]));
      expect(left.map((i) => (i.event as { nodeId: string }).nodeId)).toEqual(['a2', 'a3']);
    });
  });

  describe('timers', () => {
    it('a due timer is taken once however many pollers race for it; one not due is left', async () => {
      const { store, ids } = await runs(1);
      const runId = ids[0]!;
      const purpose = (attempt: number) => ({ kind: 'retry' as const, nodeId: 'a', iteration: '', attempt });
      const due = Array.from({ length: 8 }, (_, i) => ({
        id: uuidv7(),
        runId,
        dueAt: new Date(Date.now() - 1000),
        purpose: purpose(i + 1),
      }));
      const future = { id: uuidv7(), runId, dueAt: new Date(Date.now() + 3_600_000), purpose: purpose(99) };
      await store.transaction((tx) => tx.write(writes({ timers: [...due, future] })));
      const listed = (await store.dueTimers(100_000)).filter((t) => t.runId === runId);
      expect(listed.map((t) => t.id).sort()).toEqual(due.map((t) => t.id).sort());
      const peers = await fixture().peers(4);
      const taken = await Promise.all(
        peers.map((peer) =>
          peer.transaction(async (tx) => {
            const out = await tx.takeTimers([...due, future].map((t) => ({ id: t.id, runId })));
            await sleep(40);
            return out;
          }),
        ),
      );
      const attempts = taken.flat().map((t) => (t.event as { purpose: { attempt: number } }).purpose.attempt);
      expect(attempts.sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(taken.flat()[0]).toEqual({
        runId,
        event: { kind: 'timer_fired', purpose: expect.objectContaining({ kind: 'retry' }) },
      });
      expect((await store.dueTimers(100_000)).filter((t) => t.runId === runId)).toEqual([]);
      expect(await store.transaction((tx) => tx.takeTimers([{ id: future.id, runId }]))).toEqual([]);
    });
  });

  describe('signal mailboxes', () => {
    it('keeps a mailbox with something in it and deletes an emptied one', async () => {
      const { store, ids } = await runs(1);
      const runId = ids[0]!;
      const key = { runId, name: 'approval', correlation: '' };
      const buffered = [{ id: 's1', data: { ok: true }, by: 'ann', at: new Date(0).toISOString() }];
      await store.transaction((tx) =>
        tx.write(
          writes({
            mailboxes: [{ runId, mailbox: { name: 'approval', correlation: '', buffered, waiters: [] } }],
          }),
        ),
      );
      expect(await store.transaction((tx) => tx.loadMailboxes([key]))).toEqual([
        { runId, mailbox: { name: 'approval', correlation: '', buffered, waiters: [] } },
      ]);
      await store.transaction((tx) =>
        tx.write(
          writes({
            mailboxes: [{ runId, mailbox: { name: 'approval', correlation: '', buffered: [], waiters: [] } }],
          }),
        ),
      );
      expect(await store.transaction((tx) => tx.loadMailboxes([key]))).toEqual([]);
    });
  });
}
