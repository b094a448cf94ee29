import { Engine, type StoreTx } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, lease } from './helpers.js';

// A batch of a map's item completions, reported together, is decided in one transaction under the run's
// lock, one event after another; each finished item starts the next one, whose row the decision has to
// read. Those reads are made ahead, in one round trip for the batch, not one per event with the lock held;
// and what a batch reads per event is the same for a map of 500 items as for one of 5,000. Counted where it
// is paid: the reads of node instances each transaction sends, and the instances they ask for.

const BATCH = 100;
const CONCURRENCY = 250;

/** A store that counts, per transaction, the reads of node instances and the instances read. */
class CountingStore extends PgStore {
  readonly transactions: { reads: number; instances: number }[] = [];

  override transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return super.transaction(async (tx) => {
      const counted = { reads: 0, instances: 0 };
      const proxy = new Proxy(tx, {
        get(target, prop) {
          if (prop === 'loadTasks')
            return (keys: Parameters<StoreTx['loadTasks']>[0]) => {
              counted.reads++;
              counted.instances += keys.length;
              return target.loadTasks(keys);
            };
          const value = Reflect.get(target, prop) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      try {
        return await fn(proxy);
      } finally {
        this.transactions.push(counted);
      }
    });
  }
}

let db: TestDatabase;
let store: CountingStore;
let engine: Engine;

beforeAll(async () => {
  db = await createTestDatabase();
  store = new CountingStore(db.pool(4));
  // No background decider: every decision here is the report's own, in its transaction.
  engine = new Engine({ store, config: { decidePollMs: 60_000, timerPollMs: 60_000 } });
  await engine.start();
});
afterAll(async () => {
  await engine?.stop();
  await db?.drop();
});

/** A map over the run's input, `CONCURRENCY` items at a time, with tasks of type `<name>.item`. */
const MAP = (name: string) => `
name: ${name}
nodes:
  - id: each
    kind: map
    items: input.items
    concurrency: ${CONCURRENCY}
    task: { task_type: ${name}.item, input: { n: item } }
`;

/** Reports `BATCH` item completions of a map of `items` items at once; what that transaction read. */
async function batchOf(items: number) {
  const name = `batch-${items}`;
  await engine.definitions.deploy('default', MAP(name));
  const run = await engine.runs.start({
    namespace: 'default',
    definition: name,
    input: { items: Array.from({ length: items }, (_, i) => i) },
  });
  const leased = await lease(engine, [`${name}.item`], BATCH);
  expect(leased).toHaveLength(BATCH);
  store.transactions.length = 0;
  const { verdicts } = await engine.tasks.report({
    namespace: 'default',
    worker: 'w',
    reports: leased.map((t) => completed(t, (t.input as { n: number }).n)),
  });
  expect(verdicts.every((v) => v.accepted)).toBe(true);
  const [read] = store.transactions;
  // Each finished item started the next one: the first CONCURRENCY items, then BATCH more.
  const tasks = await engine.context.store.listTasks(run.id);
  const started = tasks.filter((t) => t.nodeId === 'each.task').length;
  expect(started).toBe(CONCURRENCY + BATCH);
  const own = tasks.find((t) => t.nodeId === 'each' && t.iteration === '')!;
  expect(own.output).toEqual({ total: items, started: CONCURRENCY + BATCH, done: BATCH });
  return read!;
}

describe('a batch of map item completions', () => {
  it('reported from two servers at once, starts each next item once, with its own item', async () => {
    const other = new Engine({ store: new PgStore(db.pool(4)), config: { decidePollMs: 60_000 } });
    await other.start();
    try {
      await engine.definitions.deploy('default', MAP('pair'));
      const run = await engine.runs.start({
        namespace: 'default',
        definition: 'pair',
        input: { items: Array.from({ length: 1000 }, (_, i) => i) },
      });
      const leased = await lease(engine, ['pair.item'], 2 * BATCH);
      expect(leased).toHaveLength(2 * BATCH);
      // Two reports of one run on separate connections: one waits for the other's run lock, then decides
      // its own batch from what the first one committed.
      const halves = [leased.slice(0, BATCH), leased.slice(BATCH)];
      const answers = await Promise.all(
        [engine, other].map((e, i) =>
          e.tasks.report({ namespace: 'default', worker: 'w', reports: halves[i]!.map((t) => completed(t)) }),
        ),
      );
      expect(answers.flatMap((a) => a.verdicts).every((v) => v.accepted)).toBe(true);
      const tasks = await engine.context.store.listTasks(run.id);
      const started = tasks.filter((t) => t.nodeId === 'each.task');
      // Each item's task got its own item: a row read ahead is the item's row, not taken for absent.
      for (const t of started) expect(t.input).toEqual({ n: Number(t.iteration) });
      const items = started.map((t) => Number(t.iteration));
      expect(new Set(items).size).toBe(items.length);
      expect(items.sort((a, b) => a - b)).toEqual(
        Array.from({ length: CONCURRENCY + 2 * BATCH }, (_, i) => i),
      );
      const own = tasks.find((t) => t.nodeId === 'each' && t.iteration === '')!;
      expect(own.output).toEqual({ total: 1000, started: CONCURRENCY + 2 * BATCH, done: 2 * BATCH });
    } finally {
      await other.stop();
    }
  });

  it('reads the items it starts in one round trip, the same per event at 500 and 5,000 items', async () => {
    const small = await batchOf(500);
    const large = await batchOf(5000);
    console.log(
      `reads of node instances in the report's transaction: ${small.reads} (500 items), ${large.reads} (5,000); instances per event: ${(small.instances / BATCH).toFixed(1)}, ${(large.instances / BATCH).toFixed(1)}`,
    );
    // One read per event would be BATCH reads; the reads ahead make it a handful whatever the batch.
    expect(small.reads).toBeLessThanOrEqual(4);
    expect(large.reads).toBeLessThanOrEqual(4);
    expect(large.instances).toBeLessThanOrEqual(small.instances * 1.2);
    expect(large.instances / BATCH).toBeLessThan(6);
  });
});
