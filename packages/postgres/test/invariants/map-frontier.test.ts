import { Engine, type StoreTx } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finish, take } from './cluster.js';

// A map of 1,000 items completes, and no evaluation reads all 1,000 items at every step: finishing an
// item reads that item's row, the map's row (which counts items started and done) and the next item's
// row. Only the last completion reads every item, once, to collect the output in item order.
//
// The cost is measured where it is paid: every node instance each transaction asks the store for is
// counted. Two engines, each with its own connections, work the items concurrently.

const ITEMS = 1000;
const MAP = `
name: big-map
nodes:
  - id: each
    kind: map
    items: input.items
    concurrency: 50
    task: { task_type: big.item, input: { n: item } }
  - { id: total, kind: transform, value: "$sum(nodes.each.output)" }
edges:
  - { from: each, to: total }
`;

/** A store that counts the node instances each transaction loads. */
class CountingStore extends PgStore {
  readonly loads: number[] = [];

  override transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return super.transaction(async (tx) => {
      let loaded = 0;
      const counted = new Proxy(tx, {
        get(target, prop) {
          if (prop === 'loadTasks')
            return (keys: Parameters<StoreTx['loadTasks']>[0]) => {
              loaded += keys.length;
              return target.loadTasks(keys);
            };
          const value = Reflect.get(target, prop) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      try {
        return await fn(counted);
      } finally {
        if (loaded > 0) this.loads.push(loaded);
      }
    });
  }
}

let db: TestDatabase;
const stores: CountingStore[] = [];
const engines: Engine[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  for (let i = 0; i < 2; i++) {
    const store = new CountingStore(db.pool(4));
    const engine = new Engine({ store, config: { decidePollMs: 20, timerPollMs: 50 } });
    await engine.start();
    stores.push(store);
    engines.push(engine);
  }
  await engines[0]!.definitions.deploy('default', MAP);
});
afterAll(async () => {
  for (const e of engines) await e.stop();
  await db?.drop();
});

describe('a map of 1,000 items', () => {
  it('completes, and each evaluation reads the frontier, not the whole map', async () => {
    const items = Array.from({ length: ITEMS }, (_, i) => i);
    const run = await engines[0]!.runs.start({
      namespace: 'default',
      definition: 'big-map',
      input: { items },
    });
    let done = false;
    const worker = async (engine: Engine) => {
      let worked = 0;
      while (!done) {
        const tasks = await take(engine, ['big.item'], 25, 50);
        await finish(engine, tasks, (t) => (t.input as { n: number }).n);
        worked += tasks.length;
      }
      return worked;
    };
    const working = engines.map(worker);
    const until = Date.now() + 90_000;
    let status = 'running';
    while (status === 'running' && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await engines[0]!.runs.get(run.id)).status;
    }
    done = true;
    const worked = (await Promise.all(working)).reduce((a, b) => a + b, 0);
    const finished = await engines[0]!.runs.get(run.id);
    expect(finished.status).toBe('completed');
    expect(worked).toBe(ITEMS);
    const tasks = await engines[0]!.context.store.listTasks(run.id);
    const each = tasks.find((t) => t.nodeId === 'each' && t.iteration === '')!;
    expect(each.output).toEqual(items);
    expect(tasks.find((t) => t.nodeId === 'total')?.output).toBe((ITEMS * (ITEMS - 1)) / 2);

    const loads = stores.flatMap((s) => s.loads).sort((a, b) => b - a);
    const total = loads.reduce((a, b) => a + b, 0);
    console.log(
      `node instances loaded: ${total} in ${loads.length} transactions (${(total / ITEMS).toFixed(1)} per item); largest ${loads.slice(0, 3).join(', ')}`,
    );
    // One transaction collects the output (it reads every item, once)...
    expect(loads[0]).toBeGreaterThanOrEqual(ITEMS);
    // ...every other one reads a few instances per event it decides (at most 25 reports per batch here),
    // nowhere near the 1,000 items.
    expect(loads[1]).toBeLessThan(300);
    // And the whole run reads a small constant per item, not items x steps (which would be ~500,000).
    expect(total).toBeLessThan(ITEMS * 12);
  });
});
