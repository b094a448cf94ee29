import { isWeftError } from '@weft/core';
import type { Engine } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, type Harness, harness, lease } from './helpers.js';

// Forks: a new run from an existing one, with another input and/or version, reusing outputs up to a node.

const V1 = `
name: forked
input_schema: { type: object, required: [n] }
nodes:
  - { id: a, task_type: fork.a }
  - { id: b, task_type: fork.b, input: { a: nodes.a.output } }
  - { id: c, task_type: fork.c, input: { b: nodes.b.output, n: input.n } }
edges:
  - { from: a, to: b }
  - { from: b, to: c }
`;
const V2 = `
name: forked
input_schema: { type: object, required: [n] }
nodes:
  - { id: a, task_type: fork.a }
  - { id: b, task_type: fork.b, input: { a: nodes.a.output } }
  - { id: c, task_type: fork.c, input: { b: nodes.b.output, n: input.n } }
  - { id: d, task_type: fork.d, input: { c: nodes.c.output } }
edges:
  - { from: a, to: b }
  - { from: b, to: c }
  - { from: c, to: d }
`;

let h: Harness;
let engine: Engine;

/** Completes the next task of one of `types`, with `output`, and returns its input. */
async function step(types: string[], output: unknown): Promise<unknown> {
  const [task] = await eventually(async () => {
    const got = await lease(engine, types, 1);
    return got.length > 0 ? got : undefined;
  });
  await engine.tasks.report({
    namespace: 'default',
    worker: 'w',
    reports: [completed(task!, output as never)],
  });
  return task!.input;
}

beforeAll(async () => {
  h = await harness({ decidePollMs: 20 });
  engine = h.engine;
  await engine.definitions.deploy('default', V1);
});
afterAll(async () => {
  await h?.close();
});

describe('forking a run', () => {
  let source = '';

  it('reuses the outputs up to a node, runs the rest with the new input, and links both runs', async () => {
    source = (await engine.runs.start({ namespace: 'default', definition: 'forked', input: { n: 1 } })).id;
    await step(['fork.a'], 'A1');
    await step(['fork.b'], 'B1');
    await step(['fork.c'], 'C1');
    await eventually(async () => ((await engine.runs.get(source)).status === 'completed' ? true : undefined));

    const fork = await engine.forks.fork({
      namespace: 'default',
      runId: source,
      input: { n: 2 },
      upToNode: 'b',
      by: 'alice',
    });
    expect(fork).toMatchObject({ status: 'running', definitionVersion: 1, input: { n: 2 } });
    // c is the first node to run again: it reads b's reused output and the new input.
    expect(await step(['fork.c'], 'C2')).toEqual({ b: 'B1', n: 2 });
    const done = await eventually(async () => {
      const run = await engine.runs.get(fork.id);
      return run.status === 'completed' ? run : undefined;
    });
    expect(done.output).toEqual({ c: 'C2' });
    const history = await engine.context.store.readHistory(fork.id, 0, 100);
    expect(history.map((e) => e.type).slice(0, 4)).toEqual([
      'run.started',
      'run.forked',
      'task.reused',
      'task.reused',
    ]);
    expect(history[1]!.data).toEqual({ from_run: source, up_to_node: 'b', reused: ['a', 'b'], by: 'alice' });
    expect(history.filter((e) => e.type === 'task.reused').map((e) => e.nodeId)).toEqual(['a', 'b']);
    expect(await engine.context.store.forkLinks(fork.id)).toEqual({
      forkedFrom: source,
      upToNode: 'b',
      forks: [],
    });
    expect(await engine.context.store.forkLinks(source)).toEqual({
      forkedFrom: null,
      upToNode: null,
      forks: [fork.id],
    });
  });

  it('forks onto another version, running the nodes that version adds after the reused ones', async () => {
    await engine.definitions.deploy('default', V2);
    const fork = await engine.forks.fork({ namespace: 'default', runId: source, version: 2, upToNode: 'c' });
    expect(fork).toMatchObject({ definitionVersion: 2, input: { n: 1 } });
    expect(await step(['fork.d'], 'D')).toEqual({ c: 'C1' });
    await eventually(async () =>
      (await engine.runs.get(fork.id)).status === 'completed' ? true : undefined,
    );
    // Without a node, nothing is reused: the fork starts from its entry nodes.
    const fresh = await engine.forks.fork({ namespace: 'default', runId: source, version: 1 });
    expect(await step(['fork.a'], 'A3')).toEqual({ n: 1 });
    expect((await engine.context.store.forkLinks(source)).forks).toEqual([
      expect.any(String),
      fork.id,
      fresh.id,
    ]);
  });

  it('refuses a node that has not completed, a node inside no graph, and an input the schema refuses', async () => {
    const running = (
      await engine.runs.start({ namespace: 'default', definition: 'forked', version: 1, input: { n: 5 } })
    ).id;
    const refusal = async (p: Promise<unknown>) => {
      try {
        await p;
        return null;
      } catch (e) {
        return isWeftError(e) ? { code: e.code, status: e.status, message: e.message } : e;
      }
    };
    expect(
      await refusal(engine.forks.fork({ namespace: 'default', runId: running, upToNode: 'b' })),
    ).toMatchObject({
      code: 'fork_not_possible',
      status: 409,
      message: expect.stringMatching(/node "b" is not reached in run/),
    });
    expect(
      await refusal(engine.forks.fork({ namespace: 'default', runId: source, upToNode: 'zz' })),
    ).toMatchObject({
      code: 'bad_fork',
      status: 400,
    });
    expect(
      await refusal(engine.forks.fork({ namespace: 'default', runId: source, input: {} })),
    ).toMatchObject({
      code: 'invalid_input',
      status: 400,
    });
    expect(await refusal(engine.forks.fork({ namespace: 'other', runId: source }))).toMatchObject({
      code: 'run_not_found',
    });
  });
});
