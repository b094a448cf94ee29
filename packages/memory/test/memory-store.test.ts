import { definitionHash, parseDefinition } from '@weft/core';
import { emptyWriteSet, type Store, type Wakeup, type WriteSet } from '@weft/engine';
import { uuidv7 } from '@weft/engine/internal';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';

// What is particular to the in-memory store: its transactions (one at a time, nested ones, commit inside
// `write`), its clock and its wake-ups. The behaviour it shares with every store is checked by the
// conformance suite (packages/testing/test/conformance.test.ts).

const writes = (parts: Partial<WriteSet>): WriteSet => ({ ...emptyWriteSet(), ...parts });
const event = (runId: string, seq: number) => ({
  runId,
  seq,
  type: 'test',
  nodeId: null,
  iteration: null,
  attempt: null,
  data: null,
});

async function withRun(store: Store) {
  const parsed = parseDefinition('name: m\nnodes:\n  - { id: a, task_type: work }\n');
  if (!parsed.ok) throw new Error('bad fixture');
  const def = parsed.value;
  const { record } = await store.transaction((tx) =>
    tx.deployDefinition('default', 'm', definitionHash(def), 'src', def),
  );
  const runId = uuidv7();
  await store.transaction((tx) =>
    tx.insertRuns([
      {
        id: runId,
        namespace: 'default',
        definitionId: record.id,
        definitionName: 'm',
        definitionVersion: 1,
        input: {},
      },
    ]),
  );
  return runId;
}

describe('MemoryStore transactions', () => {
  it('run one at a time: a second transaction starts after the first ends', async () => {
    const store = new MemoryStore();
    const order: string[] = [];
    const slow = store.transaction(async () => {
      order.push('first begins');
      await new Promise((r) => setTimeout(r, 30));
      order.push('first ends');
    });
    const fast = store.transaction(async () => {
      order.push('second begins');
    });
    await Promise.all([slow, fast]);
    expect(order).toEqual(['first begins', 'first ends', 'second begins']);
  });

  it('a transaction opened inside another runs at once; the outer one’s run locks still count', async () => {
    const store = new MemoryStore();
    const runId = await withRun(store);
    await store.transaction(async (outer) => {
      expect(await outer.lockRuns([runId], 'wait')).toHaveLength(1);
      const skipped = await store.transaction((inner) => inner.lockRuns([runId], 'skip'));
      expect(skipped).toEqual([]);
      await expect(store.transaction((inner) => inner.lockRuns([runId], 'wait'))).rejects.toMatchObject({
        code: 'deadlock',
      });
      // The inner transaction commits on its own.
      await store.transaction((inner) => inner.requestDecisions([runId], 'inner'));
    });
    expect(await store.dueDecisions(10)).toEqual([runId]);
    // Once the outer transaction ended, its locks are free.
    expect(await store.transaction((tx) => tx.lockRuns([runId], 'wait'))).toHaveLength(1);
  });

  it('a commit inside write is final; a write that fails undoes the whole transaction', async () => {
    const store = new MemoryStore();
    const runId = await withRun(store);
    await expect(
      store.transaction(async (tx) => {
        await tx.write(writes({ history: [event(runId, 1)] }), { commit: true });
        throw new Error('after the commit');
      }),
    ).rejects.toThrow('after the commit');
    expect((await store.readHistory(runId, 0, 10)).map((e) => e.seq)).toEqual([1]);
    await expect(
      store.transaction(async (tx) => {
        await tx.requestDecisions([runId], 'before');
        await tx.write(writes({ history: [event(runId, 2), event(runId, 1)] }), { commit: true });
      }),
    ).rejects.toThrow(/already/);
    expect((await store.readHistory(runId, 0, 10)).map((e) => e.seq)).toEqual([1]);
    expect(await store.dueDecisions(10)).toEqual([]);
  });

  it('refuses a transaction handle used after its transaction ended', async () => {
    const store = new MemoryStore();
    let leaked: Parameters<Parameters<Store['transaction']>[0]>[0] | null = null;
    await store.transaction(async (tx) => {
      leaked = tx;
    });
    await expect(leaked!.claimDecisions(['x'])).rejects.toMatchObject({ code: 'transaction_ended' });
  });
});

describe('MemoryStore clock and wake-ups', () => {
  it('takes its time from the clock it is given: leases expire when the clock says so', async () => {
    let now = new Date('2030-01-01T00:00:00Z');
    const store = new MemoryStore({ clock: { now: () => now } });
    const runId = await withRun(store);
    const taskId = uuidv7();
    await store.transaction((tx) =>
      tx.write(
        writes({
          newTasks: [
            {
              id: taskId,
              runId,
              namespace: 'default',
              nodeId: 'a',
              iteration: '',
              attempt: 1,
              status: 'queued',
              taskType: 'work',
              priority: 0,
              timeoutMs: null,
              input: null,
              output: null,
              error: null,
              arrivals: [],
              lease: null,
            },
          ],
          queue: [
            { taskId, runId, attempt: 1, namespace: 'default', taskType: 'work', priority: 0, delayMs: 0 },
          ],
        }),
      ),
    );
    const { tasks } = await store.transaction((tx) =>
      tx.leaseTasks({ namespace: 'default', taskTypes: ['work'], max: 1, worker: 'w', leaseMs: 60_000 }),
    );
    expect(tasks[0]!.leaseExpiresAt.toISOString()).toBe('2030-01-01T00:01:00.000Z');
    expect(await store.now()).toEqual(now);
    expect(await store.expiredLeases(10)).toEqual([]);
    now = new Date('2030-01-01T00:02:00Z');
    expect(await store.expiredLeases(10)).toEqual([{ taskId, runId }]);
  });

  it('refuses a clock without now()', () => {
    expect(() => new MemoryStore({ clock: {} as never })).toThrow(/now\(\) method/);
  });

  it('delivers wake-ups to its listeners until they stop', async () => {
    const store = new MemoryStore();
    const got: Wakeup[] = [];
    const stop = await store.listen((w) => got.push(w));
    await store.notify([{ kind: 'timers' }, { kind: 'tasks', namespace: 'default', taskTypes: ['work'] }]);
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual([{ kind: 'timers' }, { kind: 'tasks', namespace: 'default', taskTypes: ['work'] }]);
    await stop();
    await store.notify([{ kind: 'decisions' }]);
    await new Promise((r) => setImmediate(r));
    expect(got).toHaveLength(2);
  });
});
