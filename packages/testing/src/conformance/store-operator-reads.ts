import { uuidv7 } from '@weft/engine/internal';
import { describe, expect, it } from 'vitest';
import { deploy, type Fixture, freshNamespace, insertRun, newRun, sleep } from './store-fixtures.js';

/** What operators read: runs by id prefix, idempotency key and start time; counts; workers; namespaces. */
export function operatorReadTests(fixture: () => Fixture): void {
  describe('operator reads', () => {
    it('finds runs by id, by the start of an id and by idempotency key', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const def = await deploy(store, ns);
      const a = await insertRun(store, def, { id: '0190a1b2-0000-7000-8000-000000000001' });
      const b = await insertRun(store, def, { id: '0190a1b2-0000-7000-8000-000000000002' });
      const c = '0190a1c3-0000-7000-8000-000000000003';
      const key = { namespace: ns, key: 'order-7', runId: c, definitionName: def.name };
      await store.transaction(async (tx) => {
        await tx.claimIdempotencyKeys([key]);
        await tx.insertRuns([newRun(def, c, { idempotencyKey: 'order-7' })]);
      });
      const ids = async (filter: object) =>
        (await store.listRuns({ namespace: ns, limit: 10, ...filter })).items.map((r) => r.id);
      expect(await ids({ runId: a })).toEqual([a]);
      expect(await ids({ runId: '0190a1b2' })).toEqual([b, a]);
      expect(await ids({ runId: '0190A1B2-0000-7000-8000-00000000000' })).toEqual([b, a]);
      expect(await ids({ runId: '0190a1' })).toEqual([c, b, a]);
      expect(await ids({ runId: 'ffff' })).toEqual([]);
      expect(await ids({ idempotencyKey: 'order-7' })).toEqual([c]);
      expect(await ids({ idempotencyKey: 'order-8' })).toEqual([]);
      expect(await ids({ idempotencyKey: 'order-7', runId: '0190a1b2' })).toEqual([]);
      expect(await store.countMatchingRuns({ namespace: ns, runId: '0190a1b2' }, 100)).toBe(2);
      expect(await store.countMatchingRuns({ namespace: ns }, 2)).toBe(2);
      expect(await store.countMatchingRuns({ namespace: ns, status: 'completed' }, 100)).toBe(0);
    });

    it('lists summaries: input and output only when asked for', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const def = await deploy(store, ns);
      const id = await insertRun(store, def, { input: { order: 42 } });
      const [summary] = (await store.listRuns({ namespace: ns, limit: 10 })).items;
      expect(summary).toMatchObject({ id, status: 'running', input: null, output: null });
      const [full] = (await store.listRuns({ namespace: ns, limit: 10, include: ['input', 'output'] })).items;
      expect(full).toMatchObject({ id, input: { order: 42 }, output: null });
      const [inputOnly] = (await store.listRuns({ namespace: ns, limit: 10, include: ['input'] })).items;
      expect(inputOnly?.input).toEqual({ order: 42 });
    });

    it('filters by a search attribute given at start, matched as text, and reads it with the run', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const def = await deploy(store, ns);
      const a = uuidv7();
      const b = uuidv7(Date.now() + 10);
      await store.transaction((tx) =>
        tx.insertRuns([
          { ...newRun(def, a), attributes: { customer: 42, vip: true } },
          { ...newRun(def, b), attributes: { customer: '42' } },
        ]),
      );
      await insertRun(store, def);
      const page = await store.listRuns({
        namespace: ns,
        limit: 10,
        attribute: { key: 'customer', value: '42' },
      });
      expect(page.items.map((r) => r.id)).toEqual([b, a]);
      expect(page.items[1]?.attributes).toEqual({ customer: 42, vip: true });
      expect((await store.getRun(a))?.attributes).toEqual({ customer: 42, vip: true });
      expect(
        await store.countMatchingRuns({ namespace: ns, attribute: { key: 'vip', value: 'true' } }, 10),
      ).toBe(1);
    });

    it('with a start-time filter, pages go by start time and cover every matching run once', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const def = await deploy(store, ns);
      // Ids in the opposite order to start times: the order must come from the start time.
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(await insertRun(store, def, { id: uuidv7(Date.now() + 100_000 - i * 1000) }));
        await sleep(3);
      }
      const from = new Date(Date.now() - 60_000);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listRuns({
          namespace: ns,
          limit: 2,
          startedAfter: from,
          ...(cursor ? { cursor } : {}),
        });
        seen.push(...page.items.map((r) => r.id));
        cursor = page.next ?? undefined;
      } while (cursor);
      expect(seen).toEqual([...ids].reverse());
      const runs = await Promise.all(ids.map((id) => store.getRun(id)));
      const middle = runs[2]!.createdAt;
      const before = await store.listRuns({ namespace: ns, limit: 10, startedBefore: middle });
      expect(before.items.map((r) => r.id)).toEqual([ids[1], ids[0]]);
      expect(await store.countMatchingRuns({ namespace: ns, startedBefore: middle }, 100)).toBe(2);
    });

    it('remembers workers, keeps the later sighting and the types last asked for', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const t0 = new Date(Date.now() - 5000);
      const t1 = new Date(Date.now() - 1000);
      await store.recordWorkers([{ namespace: ns, name: 'w1', taskTypes: ['a', 'b'], lastSeenAt: t0 }]);
      await store.recordWorkers([
        { namespace: ns, name: 'w1', taskTypes: [], lastSeenAt: t1 },
        { namespace: ns, name: 'w2', taskTypes: ['c'], lastSeenAt: t0 },
      ]);
      // An older sighting arriving late changes nothing.
      await store.recordWorkers([{ namespace: ns, name: 'w1', taskTypes: ['z'], lastSeenAt: t0 }]);
      const seen = await store.listWorkers(ns, new Date(Date.now() - 60_000));
      expect(seen.map((w) => [w.name, [...w.taskTypes].sort(), w.lastSeenAt.getTime()])).toEqual([
        ['w1', ['a', 'b'], t1.getTime()],
        ['w2', ['c'], t0.getTime()],
      ]);
      expect(seen[0]!.firstSeenAt?.getTime()).toBe(t0.getTime());
      expect(await store.listWorkers(ns, new Date(Date.now() - 2000))).toHaveLength(1);
      expect(await store.listWorkers(freshNamespace(), new Date(0))).toEqual([]);
    });

    it('lists the namespaces that have definitions, and an empty outbox backlog', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      await deploy(store, ns);
      expect(await store.listNamespaces()).toContain(ns);
      expect(await store.outboxBacklog(ns)).toEqual([]);
    });
  });
}
