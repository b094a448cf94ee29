import { randomUUID } from 'node:crypto';
import { defineStep } from '@weft/core';
import { createEngine, type EmbeddedEngine, handle } from '@weft/embedded';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

// Invariant 31: a run's end is announced after the commit that ends it, in this process and to the others
// sharing the database (a PostgreSQL notification), and awaiting a result costs a read when it ends (and one
// when it is awaited, unless the handle comes from a start in this process), not one per step. Engines here have separate pools: real concurrent connections.

const step = defineStep<{ n: number }, { n: number }>('re.step');
const chain = (name: string, length: number) =>
  [
    `name: ${name}`,
    'nodes:',
    ...Array.from({ length }, (_, i) => `  - { id: s${i}, task_type: re.step, input: { n: ${i} } }`),
    'edges:',
    ...Array.from({ length: length - 1 }, (_, i) => `  - { from: s${i}, to: s${i + 1} }`),
  ].join('\n');

/** A safety look far longer than any test: only an announced end can wake a result. */
const NEVER = 600_000;
const config = { decidePollMs: 50, timerPollMs: 50, leasePollMs: 100 };

let db: TestDatabase;
const engines: EmbeddedEngine[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterEach(async () => {
  for (const e of engines.splice(0)) await e.stop();
});
afterAll(async () => {
  await db?.drop();
});

/** A PgStore on its own pool, counting run reads (`getRun`, `endedRuns` and the ids it was asked). */
function countedStore() {
  const store = new PgStore(db.pool(4));
  // getRun: runs read, one by one or many at once; calls: the reads that did it (statements).
  const reads = { getRun: 0, calls: 0, endedRuns: 0, asked: [] as number[] };
  const getRun = store.getRun;
  const getRuns = store.getRuns;
  const endedRuns = store.endedRuns;
  store.getRun = (id) => {
    reads.getRun++;
    reads.calls++;
    return getRun(id);
  };
  store.getRuns = (ids) => {
    reads.getRun += ids.length;
    reads.calls++;
    return getRuns(ids);
  };
  store.endedRuns = (ids) => {
    reads.endedRuns++;
    reads.asked.push(ids.length);
    return endedRuns(ids);
  };
  return { store, reads };
}

function engine(options: Parameters<typeof createEngine>[0]): EmbeddedEngine {
  const e = createEngine(options);
  engines.push(e);
  return e;
}

/** An engine on a counted store running every step itself, the workflow `yaml` deployed; no safety look. */
async function stepping(yaml: string) {
  const { store, reads } = countedStore();
  const e = engine({
    store,
    config,
    resultLookMs: NEVER,
    handlers: [handle(step, ({ n }) => ({ n: n + 1 }))],
  });
  await e.deploy(yaml);
  return { e, reads };
}

/** Settles within `ms`, or fails saying what did not happen. */
function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms)),
  ]);
}

describe('run endings', () => {
  it('a run finished by another engine on the same database wakes result() in this one', async () => {
    // The first engine runs nothing itself; the second runs every step and ends the run.
    const waiting = engine({ ...countedStore(), config, externalTaskTypes: 'any', resultLookMs: NEVER });
    const working = engine({
      ...countedStore(),
      config,
      resultLookMs: NEVER,
      handlers: [handle(step, ({ n }) => ({ n: n + 1 }))],
    });
    // A third engine only awaits the run: awaiting starts it, so it hears the end too.
    const observer = engine({ ...countedStore(), config, externalTaskTypes: 'any', resultLookMs: NEVER });
    await working.ready();
    await waiting.deploy(chain('re-remote', 3));
    const run = await waiting.start('re-remote', {});
    const observed = observer.result(run.id);
    await expect(within(20_000, run.result(), 'the other engine did not wake the result')).resolves.toEqual({
      s2: { n: 3 },
    });
    await expect(within(20_000, observed, 'the observer was not woken')).resolves.toEqual({ s2: { n: 3 } });
    expect((await waiting.engine.runs.get(run.id)).status).toBe('completed');
  });

  it('awaiting 200 runs started here reads each once, when it ends, not on every step, many in one read', async () => {
    const { e, reads } = await stepping(chain('re-many', 5));
    const runs = await Promise.all(Array.from({ length: 200 }, () => e.start('re-many', {})));
    const before = reads.getRun;
    const callsBefore = reads.calls;
    await Promise.all(runs.map((r) => r.result()));
    const read = reads.getRun - before;
    // 1,000 steps; each run is read once, when its end is announced: its handle knows it was started open.
    expect(read).toBe(200);
    // And the reads of one turn go together: the ends of a pass in one.
    expect(reads.calls - callsBefore).toBeLessThanOrEqual(60);
    expect(reads.endedRuns).toBe(0);
  });

  it('a handle awaited after its run ended resolves from the ends this process heard of', async () => {
    const { e, reads } = await stepping(chain('re-late', 2));
    const run = await e.start('re-late', {});
    // The run ends before its handle is awaited: the handle's start saw it open, but its end was heard.
    await e.settled(run.id);
    const before = reads.getRun;
    await expect(
      within(5_000, run.result(), 'a result awaited after its run ended did not resolve'),
    ).resolves.toEqual({ s1: { n: 2 } });
    expect(reads.getRun - before).toBe(1);
  });

  it('without a notification, the safety look finds ended runs in one read for all of them', async () => {
    const { store, reads } = countedStore();
    const waiting = engine({ store, config, externalTaskTypes: 'any', resultLookMs: 300 });
    // The working engine announces nothing to other processes: only the safety look can see the ends.
    let release = () => {};
    const released = new Promise<void>((r) => (release = r));
    const working = engine({
      store: new PgStore(db.pool(4)),
      config: { ...config, crossProcessWakeups: false },
      resultLookMs: NEVER,
      handlers: [handle(step, async ({ n }) => (await released, { n: n + 1 }))],
    });
    await waiting.ready();
    await working.deploy(chain('re-look', 2));
    const runs = await Promise.all(Array.from({ length: 20 }, () => working.start('re-look', {})));
    const before = reads.getRun;
    const results = Promise.all(runs.map((r) => waiting.result(r.id)));
    // The steps finish once every result has read its run running: the ends come after.
    while (reads.getRun - before < 20) await new Promise((r) => setTimeout(r, 10));
    release();
    await within(20_000, results, 'the safety look did not find the ends');
    expect(reads.endedRuns).toBeGreaterThanOrEqual(1);
    // One read asked about every awaited run at once, not one read per run.
    expect(Math.max(...reads.asked)).toBeGreaterThan(1);
    expect(reads.getRun - before).toBeLessThanOrEqual(2 * 20);
  });

  it('announces many ends at once in notifications PostgreSQL accepts', async () => {
    const sender = engine({ store: new PgStore(db.pool(2)), config: { ...config, backgroundLoops: false } });
    const receiver = engine({
      store: new PgStore(db.pool(2)),
      config: { ...config, backgroundLoops: false },
    });
    await Promise.all([sender.ready(), receiver.ready()]);
    const heard = new Set<string>();
    receiver.engine.context.wakeups.ended.listen((ids) => {
      for (const id of ids) heard.add(id);
    });
    // A notification's payload must stay under 8,000 bytes: 1,000 ids are split over several.
    const ids = Array.from({ length: 1000 }, () => randomUUID());
    sender.engine.context.wakeups.announce([{ kind: 'ended', runIds: ids }]);
    await within(
      20_000,
      (async () => {
        while (heard.size < ids.length) await new Promise((r) => setTimeout(r, 20));
      })(),
      'every announced end did not arrive',
    );
    expect([...heard].sort()).toEqual([...ids].sort());
  });
});
