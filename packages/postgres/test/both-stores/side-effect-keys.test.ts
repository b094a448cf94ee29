import type { LeasedTask } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, failed, lease } from '../helpers.js';
import { STORES, type StoreHarness, storeHarness } from './stores.js';

// Every leased task carries a side-effect key, the one a worker gives a payment provider: the same for every
// attempt of one node instance (so a retry charges nothing twice) and different for each node, loop pass and
// map item (so two charges meant to happen both happen). The task id is new with each attempt, and is not it.

const KEYS = `
name: keys
nodes:
  - { id: pay, task_type: keys.pay, retry: { max_attempts: 3, backoff: fixed, delay: 10ms } }
  - { id: each, kind: map, items: input.items, task: { task_type: keys.item } }
  - id: again
    kind: loop
    max_iterations: 3
    while: "index < 1"
    body:
      nodes:
        - { id: step, task_type: keys.pass }
edges:
  - { from: pay, to: each }
  - { from: each, to: again }
`;

describe.each(STORES)('side-effect keys on the %s store', (kind) => {
  let h: StoreHarness;
  beforeAll(async () => {
    h = await storeHarness(kind);
    await h.engine.definitions.deploy('default', KEYS);
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Leases `n` tasks of a type, waiting for them to be queued. */
  const take = (type: string, n: number) =>
    eventually(
      async () => {
        const got = await lease(h.engine, [type], n);
        return got.length === n ? got : undefined;
      },
      10_000,
      `${n} ${type} task(s)`,
    );
  const report = (reports: Parameters<StoreHarness['engine']['tasks']['report']>[0]['reports']) =>
    h.engine.tasks.report({ namespace: 'default', worker: 'test-worker', reports });

  it('are the same across retries and differ by node, loop pass and map item', async () => {
    const run = await h.engine.runs.start({
      namespace: 'default',
      definition: 'keys',
      input: { items: ['x', 'y'] },
    });
    const other = await h.engine.runs.start({
      namespace: 'default',
      definition: 'keys',
      input: { items: [] },
    });

    const pays: LeasedTask[] = [];
    for (let attempt = 1; attempt <= 2; attempt++) {
      const both = await take('keys.pay', attempt === 1 ? 2 : 1);
      const mine = both.find((t) => t.runId === run.id)!;
      expect(mine.attempt).toBe(attempt);
      pays.push(mine);
      const others = both.filter((t) => t.runId === other.id);
      await report([
        attempt === 1 ? failed(mine, 'the provider timed out') : completed(mine, 'paid'),
        ...others.map((t) => completed(t, 'paid')),
      ]);
      // Another run's same node has a key of its own.
      for (const t of others) expect(t.idempotencyKey).not.toBe(mine.idempotencyKey);
    }
    // A retry: a new task id, the same key.
    expect(pays[1]!.id).not.toBe(pays[0]!.id);
    expect(pays[1]!.idempotencyKey).toBe(pays[0]!.idempotencyKey);

    const items = await take('keys.item', 2);
    expect(items.every((t) => t.runId === run.id)).toBe(true);
    await report(items.map((t) => completed(t, t.iteration)));
    const passes: LeasedTask[] = [];
    for (let pass = 0; pass < 2; pass++) {
      // Both runs' loops are at the same pass: the other run's map had no items.
      const both = await take('keys.pass', 2);
      await report(both.map((t) => completed(t, pass)));
      passes.push(...both.filter((t) => t.runId === run.id));
    }
    expect(passes).toHaveLength(2);

    const keys = [pays[0]!, ...items, ...passes].map((t) => t.idempotencyKey);
    expect(new Set(keys).size).toBe(5);
    for (const key of keys)
      expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    await eventually(async () =>
      (await h.engine.runs.get(run.id))?.status === 'completed' ? true : undefined,
    );
  });
});
