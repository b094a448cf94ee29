import type { OutboxRetryPolicy, OutboxRow, OutboxWrite } from '@weft/engine';
import { describe, expect, it } from 'vitest';
import { deploy, type Fixture, freshNamespace, insertRun, sleep, writes } from './store-fixtures.js';

const POLICY: OutboxRetryPolicy = { maxAttempts: 2, baseDelayMs: 60_000, maxDelayMs: 600_000 };

/** The transactional outbox: claim, settle, back off, dead letters and replay. */
export function outboxTests(fixture: () => Fixture): void {
  async function rows(n: number) {
    const { store } = fixture();
    const ns = freshNamespace();
    const runId = await insertRun(store, await deploy(store, ns));
    const destination = `dest-${ns}`;
    const out: OutboxWrite[] = Array.from({ length: n }, (_, i) => ({
      runId,
      namespace: ns,
      taskId: null,
      destination,
      messageId: `m${i}`,
      payload: { kind: 'wake_run', runId, reason: `row ${i}` },
    }));
    await store.transaction((tx) => tx.write(writes({ outbox: out })));
    return { store, ns, runId, destination };
  }
  const claim = (f: Fixture, destination: string, limit = 100) =>
    f.store.transaction((tx) => tx.claimOutbox(destination, limit));

  describe('outbox', () => {
    it('claims due rows oldest first; delivered rows go, failed ones back off and then become dead letters', async () => {
      const { store, ns, destination } = await rows(3);
      expect(await store.outboxDestinations()).toContain(destination);
      const claimed = await claim(fixture(), destination);
      expect(claimed.map((r) => r.messageId)).toEqual(['m0', 'm1', 'm2']);
      expect(claimed[0]).toMatchObject({
        namespace: ns,
        status: 'pending',
        attempts: 0,
        payload: { kind: 'wake_run' },
      });
      const [m0, m1, m2] = claimed as [OutboxRow, OutboxRow, OutboxRow];
      await store.transaction((tx) =>
        tx.settleOutbox(
          [
            { runId: m0.runId, id: m0.id, delivery: { kind: 'delivered' } },
            { runId: m1.runId, id: m1.id, delivery: { kind: 'failed', error: 'refused' } },
            { runId: m2.runId, id: m2.id, delivery: { kind: 'failed', error: 'malformed', permanent: true } },
          ],
          POLICY,
        ),
      );
      // m1 backs off (not due for a minute), m2 is a dead letter, m0 is gone.
      expect(await claim(fixture(), destination)).toEqual([]);
      expect(await store.outboxDestinations()).not.toContain(destination);
      const dead = await store.listDeadLetters({ namespace: ns, limit: 10 });
      expect(dead.items.map((r) => [r.messageId, r.status, r.attempts, r.lastError])).toEqual([
        ['m2', 'dead', 1, 'malformed'],
      ]);
      expect(dead.items[0]!.deadAt).toBeInstanceOf(Date);
    });

    it('replays dead letters with their attempts reset', async () => {
      const { store, ns, destination } = await rows(2);
      const claimed = await claim(fixture(), destination);
      await store.transaction((tx) =>
        tx.settleOutbox(
          claimed.map((r) => ({
            runId: r.runId,
            id: r.id,
            delivery: { kind: 'failed', error: 'gone', permanent: true },
          })),
          POLICY,
        ),
      );
      const page = await store.listDeadLetters({ namespace: ns, limit: 1 });
      expect(page.items.map((r) => r.messageId)).toEqual(['m1']);
      const rest = await store.listDeadLetters({ namespace: ns, limit: 1, cursor: page.next! });
      expect([rest.items.map((r) => r.messageId), rest.next]).toEqual([['m0'], null]);
      expect(
        await store.transaction((tx) => tx.replayDeadLetters({ namespace: ns, ids: [page.items[0]!.id] })),
      ).toBe(1);
      expect(await store.transaction((tx) => tx.replayDeadLetters({ namespace: ns, destination }))).toBe(1);
      const again = await claim(fixture(), destination);
      expect(again.map((r) => [r.messageId, r.attempts, r.status]).sort()).toEqual([
        ['m0', 0, 'pending'],
        ['m1', 0, 'pending'],
      ]);
      expect((await store.listDeadLetters({ namespace: ns, limit: 10 })).items).toEqual([]);
    });

    it('concurrent relays never deliver one row twice', async () => {
      const { destination } = await rows(6);
      const peers = await fixture().peers(4);
      const delivered = await Promise.all(
        peers.map((peer) =>
          peer.transaction(async (tx) => {
            const claimed = await tx.claimOutbox(destination, 2);
            await sleep(40); // delivering, with the rows held
            await tx.settleOutbox(
              claimed.map((r) => ({ runId: r.runId, id: r.id, delivery: { kind: 'delivered' } })),
              POLICY,
            );
            return claimed.map((r) => r.messageId);
          }),
        ),
      );
      const all = delivered.flat();
      expect(all.length).toBe(new Set(all).size);
      const left = await claim(fixture(), destination);
      expect([...all, ...left.map((r) => r.messageId)].sort()).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
    });

    it('drops an effect tied to a task whose insert was absorbed as a duplicate', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const runId = await insertRun(store, await deploy(store, ns));
      const destination = `dest-${ns}`;
      const task = (id: string) => ({
        id,
        runId,
        namespace: ns,
        nodeId: 'a',
        iteration: '',
        attempt: 1,
        status: 'running' as const,
        taskType: null,
        priority: 0,
        timeoutMs: null,
        input: null,
        output: null,
        error: null,
        arrivals: [],
        lease: null,
      });
      const effect = (taskId: string): OutboxWrite => ({
        runId,
        namespace: ns,
        taskId,
        destination,
        messageId: taskId,
        payload: { kind: 'wake_run', runId, reason: 'child' },
      });
      const first = '00000000-0000-4000-8000-00000000000a';
      const dup = '00000000-0000-4000-8000-00000000000b';
      await store.transaction(async (tx) => {
        await tx.lockRuns([runId], 'wait');
        await tx.write(writes({ newTasks: [task(first)], outbox: [effect(first)] }));
      });
      const { absorbed } = await store.transaction(async (tx) => {
        await tx.lockRuns([runId], 'wait');
        return tx.write(writes({ newTasks: [task(dup)], outbox: [effect(dup)] }));
      });
      expect(absorbed).toEqual([{ runId, nodeId: 'a', iteration: '', attempt: 1 }]);
      expect((await claim(fixture(), destination)).map((r) => r.messageId)).toEqual([first]);
      // The absorbed insert asks for another decision, so one more pass sees the true state.
      expect(await store.dueDecisions(100_000)).toContain(runId);
    });
  });
}
