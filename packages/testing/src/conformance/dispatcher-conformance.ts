import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Json } from '@weft/core';
import { Engine, type EngineConfig, emptyWriteSet, FolderBlobStore, type LeasedTask } from '@weft/engine';
import { armFault } from '@weft/engine/internal';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DispatcherFixture } from './dispatcher-fixture.js';

const FLOW = `
name: conformance-flow
nodes:
  - { id: a, task_type: conformance.step }
  - { id: b, task_type: conformance.step, input: { from_a: nodes.a.output } }
  - { id: c, task_type: conformance.step }
  - { id: d, task_type: conformance.step, input: { b: nodes.b.output, c: nodes.c.output } }
edges:
  - { from: a, to: [b, c] }
  - { from: b, to: d }
  - { from: c, to: d }
`;

const FLAKY = `
name: conformance-flaky
nodes:
  - { id: f, task_type: conformance.flaky, retry: { max_attempts: 2, backoff: fixed, delay: 1500ms } }
`;

const ONE = `
name: conformance-one
nodes:
  - { id: x, task_type: conformance.once }
`;

/** Engine settings for the suite: fast loops, and a repair that looks after 300 ms. */
const CONFIG: Partial<EngineConfig> = {
  decidePollMs: 50,
  timerPollMs: 50,
  leasePollMs: 100,
  relayPollMs: 100,
  redispatchPollMs: 100,
  redispatchAfterMs: 300,
};

async function until<T>(check: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The behaviour every dispatcher must have, run against real PostgreSQL through a real engine: a workflow
 * runs to the end; a retry is held back for its backoff (the dispatcher's delay, or the engine's timer); a
 * duplicated message runs its step once; a transaction that rolls back dispatches nothing; and a run whose
 * dispatch was interrupted between commit and enqueue still finishes. Call it from a test file with a
 * function that builds a fresh fixture for each test.
 */
export function dispatcherConformance(name: string, makeDispatcher: () => Promise<DispatcherFixture>): void {
  describe(`dispatcher conformance: ${name}`, () => {
    let fx: DispatcherFixture;
    let engine: Engine;
    const stops: (() => Promise<void>)[] = [];
    const disarms: (() => void)[] = [];

    beforeEach(async () => {
      fx = await makeDispatcher();
      engine = new Engine({
        store: fx.store,
        dispatcher: fx.dispatcher,
        destinations: fx.destinations ?? [],
        blobs: new FolderBlobStore(mkdtempSync(join(tmpdir(), 'weft-conformance-'))),
        config: CONFIG,
      });
      await engine.start();
      for (const yaml of [FLOW, FLAKY, ONE]) await engine.definitions.deploy('default', yaml);
    });

    afterEach(async () => {
      for (const d of disarms.splice(0)) d();
      for (const s of stops.splice(0)) await s();
      await engine.stop();
      await fx.close();
    });

    const consume = (types: string[], handler: (t: LeasedTask) => Json | Promise<Json>) =>
      stops.push(fx.consume(engine, types, handler));
    const finished = (runId: string, ms = 15_000) =>
      until(
        async () => {
          const run = await engine.runs.get(runId);
          return run.status === 'running' ? undefined : run;
        },
        ms,
        `run ${runId} to finish`,
      );

    it('runs a workflow to the end', async () => {
      consume(['conformance.step'], (t) => ({ node: t.nodeId }));
      const run = await engine.runs.start({
        namespace: 'default',
        definition: 'conformance-flow',
        input: {},
      });
      const done = await finished(run.id);
      expect(done.status).toBe('completed');
      const tasks = await fx.store.listTasks(run.id);
      expect(tasks.map((t) => `${t.nodeId}:${t.status}`).sort()).toEqual([
        'a:completed',
        'b:completed',
        'c:completed',
        'd:completed',
      ]);
    });

    it('holds a retry back for its backoff', async () => {
      const starts: number[] = [];
      consume(['conformance.flaky'], (t) => {
        starts.push(Date.now());
        if (t.attempt === 1) throw new Error('first attempt fails');
        return 'ok';
      });
      const run = await engine.runs.start({
        namespace: 'default',
        definition: 'conformance-flaky',
        input: {},
      });
      expect((await finished(run.id)).status).toBe('completed');
      expect(starts).toHaveLength(2);
      // The retry started no sooner than its 1500 ms backoff after the first attempt began.
      expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(1500);
      // A queue of one's own holds the retry back itself: it was queued at once, with the delay.
      const history = await fx.store.readHistory(run.id, 0, 100);
      const retry = history.find((e) => e.type === 'task.scheduled' && e.attempt === 2);
      if (engine.context.dispatchMode.kind !== 'rows') expect(retry?.data).toMatchObject({ delay_ms: 1500 });
    });

    it('runs a step once when its message is duplicated', async () => {
      let runs = 0;
      let gate: () => void = () => {};
      const hold = new Promise<void>((r) => {
        gate = r;
      });
      consume(['conformance.once'], async () => {
        runs++;
        await hold;
        return 'done';
      });
      const run = await engine.runs.start({ namespace: 'default', definition: 'conformance-one', input: {} });
      const task = await until(
        async () => (await fx.store.listTasks(run.id)).find((t) => t.status === 'running'),
        10_000,
        'the step to be leased',
      );
      // While the step runs, and again once it has finished, the same attempt is delivered once more.
      const message = {
        taskId: task.id,
        runId: run.id,
        attempt: task.attempt,
        namespace: 'default',
        taskType: 'conformance.once',
        priority: 0,
        notBefore: null,
      };
      await fx.duplicate(message);
      await new Promise((r) => setTimeout(r, 300));
      gate();
      expect((await finished(run.id)).status).toBe('completed');
      await fx.duplicate(message);
      await new Promise((r) => setTimeout(r, 500));
      expect(runs).toBe(1);
    });

    it('dispatches nothing for a transaction that rolls back', async () => {
      let runs = 0;
      const before = await fx.pending();
      disarms.push(
        armFault('pass.after-write', () => {
          throw new Error('rolled back after the writes');
        }),
      );
      await expect(
        engine.runs.start({ namespace: 'default', definition: 'conformance-one', input: {} }),
      ).rejects.toThrow('rolled back after the writes');
      for (const d of disarms.splice(0)) d();
      expect(await fx.pending()).toBe(before);
      consume(['conformance.once'], () => {
        runs++;
        return null;
      });
      await new Promise((r) => setTimeout(r, 500));
      expect(runs).toBe(0);
    });

    it('finishes a run whose dispatch was interrupted between commit and enqueue', async () => {
      let crashes = 0;
      disarms.push(
        armFault('dispatch.after-commit', () => {
          crashes++;
          for (const d of disarms.splice(0)) d();
          throw new Error('crashed after commit, before enqueue');
        }),
      );
      let runId: string | null = null;
      try {
        runId = (await engine.runs.start({ namespace: 'default', definition: 'conformance-flow', input: {} }))
          .id;
      } catch (e) {
        expect(String(e)).toContain('crashed after commit');
      }
      // The start committed: find its run whether or not the caller heard back.
      const page = await fx.store.listRuns({
        namespace: 'default',
        definition: 'conformance-flow',
        limit: 10,
      });
      runId ??= page.items[0]!.id;
      consume(['conformance.step'], (t) => ({ node: t.nodeId }));
      expect((await finished(runId)).status).toBe('completed');
      // Only write-then-enqueue has the window; with transactional dispatch the fault point is never reached.
      expect(crashes).toBe(engine.context.dispatchMode.kind === 'after_commit' ? 1 : 0);
    });
  });
}

/** A queue row for an attempt, written in a transaction of its own (a duplicate for Weft's table queue). */
export async function duplicateQueueRow(
  store: DispatcherFixture['store'],
  task: Parameters<DispatcherFixture['duplicate']>[0],
): Promise<void> {
  const writes = emptyWriteSet();
  writes.queue.push({ ...task, delayMs: 0 });
  await store.transaction((tx) => tx.write(writes));
}
