import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, lease } from '../helpers.js';
import { STORES, type StoreHarness, storeHarness } from './stores.js';

// `endedRuns` answers, in one read, which of the runs asked about have ended: what the embedded engine's
// safety look asks for every awaited run at once (invariant 31).

const ONE = 'name: ends\nnodes:\n  - { id: a, task_type: ends.step }\n';

describe.each(STORES)('ended runs on the %s store', (kind) => {
  let h: StoreHarness;
  beforeAll(async () => {
    h = await storeHarness(kind);
    await h.engine.definitions.deploy('default', ONE);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('names the runs that ended among those asked, and no other', async () => {
    const start = () => h.engine.runs.start({ namespace: 'default', definition: 'ends', input: {} });
    const [done, cancelled, running] = [await start(), await start(), await start()];
    const [task] = await eventually(async () => {
      const got = (await lease(h.engine, ['ends.step'], 3)).filter((t) => t.runId === done.id);
      return got.length === 1 ? got : undefined;
    });
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(task!, 1)] });
    await h.engine.control.cancel(cancelled.id, { by: 'test' });
    await eventually(async () =>
      (await h.engine.runs.get(done.id)).status === 'completed' ? true : undefined,
    );
    const ended = await h.store.endedRuns!([done.id, cancelled.id, running.id]);
    expect(ended.sort()).toEqual([done.id, cancelled.id].sort());
    expect(await h.store.endedRuns!([])).toEqual([]);
  });

  it('reads many runs at once, as one by one, leaving out ids that name no run', async () => {
    const start = () => h.engine.runs.start({ namespace: 'default', definition: 'ends', input: { n: 1 } });
    const [a, b] = [await start(), await start()];
    const missing = '00000000-0000-4000-8000-000000000000';
    const got = await h.store.getRuns!([a.id, missing, b.id]);
    const byId = new Map(got.map((r) => [r.id, r]));
    expect([...byId.keys()].sort()).toEqual([a.id, b.id].sort());
    for (const id of [a.id, b.id]) expect(byId.get(id)).toEqual(await h.store.getRun(id));
    expect(await h.store.getRuns!([])).toEqual([]);
  });
});
