import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, lease } from '../helpers.js';
import { STORES, type StoreHarness, storeHarness } from './stores.js';

// Run progress and events that start runs, on every store Weft ships: both keep the same counts, and both
// find the latest version of the definitions an event triggers.

describe.each(STORES)('progress and triggers on the %s store', (kind) => {
  let h: StoreHarness;
  beforeAll(async () => {
    h = await storeHarness(kind, { backgroundLoops: false, systemTasks: false });
    await h.engine.definitions.deploy(
      'default',
      `name: diamond
triggers: [{ event: go, input: { n: data.n } }]
nodes:
  - { id: a, task_type: pt.work }
  - { id: b, task_type: pt.work }
  - { id: c, task_type: pt.work }
  - { id: d, task_type: pt.work }
edges:
  - { from: a, to: [b, c] }
  - { from: b, to: d }
  - { from: c, to: d }
`,
    );
    await h.engine.definitions.deploy(
      'default',
      'name: old\ntriggers: [{ event: go }]\nnodes: [{ id: a, task_type: pt.old }]\n',
    );
    await h.engine.definitions.deploy('default', 'name: old\nnodes: [{ id: a, task_type: pt.old2 }]\n');
  });
  afterAll(async () => {
    await h?.close();
  });

  const finishAll = async () => {
    const tasks = await lease(h.engine, ['pt.work']);
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: tasks.map((t) => completed(t)),
    });
  };

  it('an event starts the latest version of what listens, once per id, and the run counts its steps', async () => {
    const sent = await h.engine.events.emit({ namespace: 'default', name: 'go', id: 'e1', data: { n: 1 } });
    expect(sent.failures).toEqual([]);
    expect(sent.runs.map((r) => [r.definition, r.created])).toEqual([['diamond', true]]);
    const again = await h.engine.events.emit({ namespace: 'default', name: 'go', id: 'e1', data: { n: 1 } });
    expect(again.runs.map((r) => [r.run.id, r.created])).toEqual([[sent.runs[0]!.run.id, false]]);
    const runId = sent.runs[0]!.run.id;
    expect((await h.engine.runs.get(runId)).input).toEqual({ n: 1 });
    expect((await h.engine.runs.get(runId)).progress).toEqual({
      known: 1,
      completed: 0,
      failed: 0,
      running: 1,
    });
    await finishAll();
    expect((await h.engine.runs.get(runId)).progress).toEqual({
      known: 3,
      completed: 1,
      failed: 0,
      running: 2,
    });
    await finishAll();
    await finishAll();
    const done = await h.engine.runs.get(runId);
    expect(done.status).toBe('completed');
    expect(done.progress).toEqual({ known: 4, completed: 4, failed: 0, running: 0 });
  });
});
