import { createEngine, type EmbeddedEngine, type EmbeddedOptions } from '@weft/embedded';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

// The embedded engine's starts take the latest version as the engine last read it, and their transaction
// confirms it: a burst of starts is at most one read of the definition, a start after a deploy by another
// process runs (and checks its handlers against) that version. Two engines on separate pools: real
// connections.

const ONE = (value: number) =>
  `name: es-flow\nnodes:\n  - { id: a, task_type: es.step, input: { v: ${value} } }\n`;
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

/** An engine whose store counts the reads of a definition by name. */
function countingEngine(options: Partial<EmbeddedOptions> = {}) {
  const store = new PgStore(db.pool(4));
  const reads = { getDefinition: 0 };
  const getDefinition = store.getDefinition.bind(store);
  store.getDefinition = (namespace, name, version) => {
    reads.getDefinition++;
    return getDefinition(namespace, name, version);
  };
  const e = createEngine({ store, config, externalTaskTypes: 'any', ...options });
  engines.push(e);
  return { e, reads };
}

describe('embedded starts', () => {
  it('a burst of starts reads its definition once, and a later start sees a version another engine deployed', async () => {
    const { e, reads } = countingEngine();
    const other = countingEngine().e;
    await e.deploy(ONE(1));
    const before = reads.getDefinition;
    const runs = await Promise.all(Array.from({ length: 100 }, () => e.start('es-flow', {})));
    expect(new Set(runs.map((r) => r.id)).size).toBe(100);
    // One read for the hundred (the burst may straddle two turns of the event loop: at most a few).
    expect(reads.getDefinition - before).toBeGreaterThanOrEqual(1);
    expect(reads.getDefinition - before).toBeLessThanOrEqual(3);
    const first = await e.engine.runs.get(runs[0]!.id);
    expect(first.definitionVersion).toBe(1);

    // Another process deploys version 2; the next start here uses it.
    expect((await other.deploy(ONE(2))).version).toBe(2);
    const later = await e.start('es-flow', {});
    expect((await e.engine.runs.get(later.id)).definitionVersion).toBe(2);
  });

  it("a start after another server's deploy runs the new version", async () => {
    // The engine's own start, as the server's API calls it.
    const { e, reads } = countingEngine();
    const other = countingEngine().e;
    const start = async () =>
      (await e.engine.runs.start({ namespace: 'default', definition: 'es-flow', input: {} }))
        .definitionVersion;
    const v = (await e.deploy(ONE(10))).version;
    expect(await start()).toBe(v);
    // Once read, the latest version is taken from memory: starts one after another read nothing more.
    const before = reads.getDefinition;
    for (let i = 0; i < 3; i++) expect(await start()).toBe(v);
    expect(reads.getDefinition).toBe(before);
    // Another engine deploys: the next start's transaction finds its version is no longer the latest,
    // writes nothing, and starts again with the version read from the store.
    const next = (await other.deploy(ONE(11))).version;
    expect(next).toBe(v + 1);
    expect(await start()).toBe(next);
    expect(reads.getDefinition).toBe(before + 1);
    const [row] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM weft.runs WHERE definition_name = 'es-flow' AND definition_version = ${v}::int`;
    expect(row!.n).toBe(4);
    // A deploy in this engine replaces the version it remembers.
    expect((await e.deploy(ONE(12))).version).toBe(next + 1);
    expect(await start()).toBe(next + 1);
  });

  it('a start checks its handlers against the version another engine deployed', async () => {
    // This engine runs es.step only; another deploys a version that needs es.other too.
    const { e, reads } = countingEngine({
      externalTaskTypes: [],
      handlers: [{ taskType: 'es.step', run: async () => 1 }],
    });
    const other = countingEngine().e;
    const v = (await e.deploy(ONE(20))).version;
    const first = await e.start('es-flow', {});
    expect((await e.engine.runs.get(first.id)).definitionVersion).toBe(v);
    // The latest version is taken from memory: a start of it reads no definition.
    const before = reads.getDefinition;
    await e.start('es-flow', {});
    expect(reads.getDefinition).toBe(before);
    const needsOther = `${ONE(21)}  - { id: b, task_type: es.other }\n`;
    expect((await other.deploy(needsOther)).version).toBe(v + 1);
    // The start's transaction finds the newer version; checked before anything is written, it is refused.
    const count = async () =>
      (
        await db.sql<
          { n: number }[]
        >`SELECT count(*)::int AS n FROM weft.runs WHERE definition_name = 'es-flow'`
      )[0]!.n;
    const runsBefore = await count();
    await expect(e.start('es-flow', {})).rejects.toMatchObject({
      code: 'invalid_definition',
      message: expect.stringContaining('es.other'),
    });
    expect(await count()).toBe(runsBefore);
  });
});
