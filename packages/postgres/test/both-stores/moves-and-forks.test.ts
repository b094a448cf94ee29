import type { Json } from '@weft/core';
import type { Engine, LeasedTask } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually } from '../helpers.js';
import { STORES, type StoreHarness, storeHarness } from './stores.js';

// Moving a run and forking one, on every store Weft ships.

const V1 = `
name: paused-move
nodes:
  - { id: a, task_type: pm.step }
  - { id: b, task_type: pm.step }
  - { id: c, task_type: pm.step, input: { b: nodes.b.output } }
edges:
  - { from: a, to: b }
  - { from: b, to: c }
`;
// Version 2 renames b to b2.
const V2 = `
name: paused-move
nodes:
  - { id: a, task_type: pm.step }
  - { id: b2, task_type: pm.step }
  - { id: c, task_type: pm.step, input: { b: nodes.b2.output } }
edges:
  - { from: a, to: b2 }
  - { from: b2, to: c }
`;

const SWITCHED = `
name: fork-switch
nodes:
  - { id: a, task_type: fs.a }
  - { id: route, kind: switch, expression: input.tier }
  - { id: gold, task_type: fs.gold }
  - { id: plain, task_type: fs.plain }
  - { id: done, task_type: fs.done }
edges:
  - { from: a, to: route }
  - { from: route, to: gold, case: gold }
  - { from: route, to: plain, default: true }
  - { from: gold, to: done }
  - { from: plain, to: done }
`;

async function next(engine: Engine, types: string[]): Promise<LeasedTask> {
  const [task] = await eventually(async () => {
    const got = await engine.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: types,
      max: 1,
      waitMs: 0,
    });
    return got.length > 0 ? got : undefined;
  });
  return task!;
}

async function finish(engine: Engine, task: LeasedTask, output: Json) {
  return engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(task, output)] });
}

describe.each(STORES)('moves and forks on the %s store', (kind) => {
  let h: StoreHarness;
  beforeAll(async () => {
    h = await storeHarness(kind);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('moves a paused run whose report waits in its inbox, renaming the event, and resumes on the new version', async () => {
    const { engine } = h;
    await engine.definitions.deploy('default', V1);
    await engine.definitions.deploy('default', V2);
    const run = await engine.runs.start({
      namespace: 'default',
      definition: 'paused-move',
      version: 1,
      input: {},
    });
    await finish(engine, await next(engine, ['pm.step']), 'A');
    const b = await next(engine, ['pm.step']);
    await engine.control.pause(run.id, { by: 'ops' });
    expect((await finish(engine, b, 'B')).verdicts[0]).toMatchObject({ accepted: true, nodeId: 'b' });
    const [moved] = await engine.moves.apply(
      {
        namespace: 'default',
        definition: 'paused-move',
        toVersion: 2,
        nodeMap: { b: 'b2' },
        runIds: [run.id],
      },
      { by: 'ops' },
    );
    expect(moved).toMatchObject({ moved: true, fromVersion: 1 });
    await engine.control.resume(run.id, { by: 'ops' });
    const c = await next(engine, ['pm.step']);
    expect(c).toMatchObject({ nodeId: 'c', input: { b: 'B' } });
    await finish(engine, c, 'C');
    const done = await eventually(async () => {
      const r = await engine.runs.get(run.id);
      return r.status === 'completed' ? r : undefined;
    });
    expect(done.definitionVersion).toBe(2);
    const types = (await engine.context.store.readHistory(run.id, 0, 100)).map((e) => e.type);
    expect(types).toContain('run.migrated');
  });

  it('forks past a switch without starting the branch the source did not take', async () => {
    const { engine } = h;
    await engine.definitions.deploy('default', SWITCHED);
    const source = await engine.runs.start({
      namespace: 'default',
      definition: 'fork-switch',
      input: { tier: 'gold' },
    });
    await finish(engine, await next(engine, ['fs.a']), 'A');
    await finish(engine, await next(engine, ['fs.gold']), 'G');
    await finish(engine, await next(engine, ['fs.done']), 'D');
    await eventually(async () =>
      (await engine.runs.get(source.id)).status === 'completed' ? true : undefined,
    );

    const fork = await engine.forks.fork({ namespace: 'default', runId: source.id, upToNode: 'gold' });
    await finish(engine, await next(engine, ['fs.done']), 'D2');
    await eventually(async () =>
      (await engine.runs.get(fork.id)).status === 'completed' ? true : undefined,
    );
    const rows = await engine.context.store.listTasks(fork.id);
    expect(rows.map((t) => `${t.nodeId}:${t.status}`).sort()).toEqual([
      'a:completed',
      'done:completed',
      'gold:completed',
      'plain:skipped',
      'route:completed',
    ]);
  });
});
