import type { LeasedTask } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, lease } from '../helpers.js';
import { STORES, type StoreHarness, storeHarness } from './stores.js';

// A start's traceparent is kept with its run and handed to every task of it, by every lease path (a poll, a
// task handed to the reporting worker) and to the tasks of a child run. No OpenTelemetry SDK is registered
// here: with tracing off, the caller's own context is what is kept and handed on, unchanged.

const PARENT = `
name: traced
nodes:
  - { id: a, task_type: tc.work }
  - { id: b, task_type: tc.work }
  - { id: kid, kind: sub_workflow, definition: traced_kid }
edges:
  - { from: a, to: b }
  - { from: b, to: kid }
`;
const KID = `
name: traced_kid
nodes:
  - { id: k, task_type: tc.kid }
`;
const UNTRACED = `
name: untraced
nodes:
  - { id: u, task_type: tc.untraced }
`;
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe.each(STORES)('trace context on the %s store', (kind) => {
  let h: StoreHarness;
  beforeAll(async () => {
    h = await storeHarness(kind);
    await h.engine.definitions.deploy('default', KID);
    await h.engine.definitions.deploy('default', PARENT);
    await h.engine.definitions.deploy('default', UNTRACED);
  });
  afterAll(async () => {
    await h?.close();
  });

  it("keeps the start's traceparent with the run and hands it with each task, a child run's too", async () => {
    const run = await h.engine.runs.start({
      namespace: 'default',
      definition: 'traced',
      input: {},
      traceContext: TRACEPARENT,
    });
    expect(run.traceContext).toBe(TRACEPARENT);
    const [a] = await lease(h.engine, ['tc.work']);
    expect(a).toMatchObject({ runId: run.id, nodeId: 'a', traceContext: TRACEPARENT });
    // Reported with room for more: b is handed straight to this worker by the report's decision.
    const { leased } = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'test-worker',
      reports: [completed(a!)],
      next: { taskTypes: ['tc.work'], max: 1 },
    });
    let b: LeasedTask | undefined = leased[0];
    b ??= (await lease(h.engine, ['tc.work']))[0];
    expect(b).toMatchObject({ nodeId: 'b', traceContext: TRACEPARENT });
    await h.engine.tasks.report({ namespace: 'default', worker: 'test-worker', reports: [completed(b!)] });
    // The child is started by the outbox relay, in the background.
    const k = await eventually(
      async () => (await lease(h.engine, ['tc.kid']))[0],
      30_000,
      "the child's task",
    );
    expect(k.runId).not.toBe(run.id);
    expect(k.traceContext).toBe(TRACEPARENT);
  });

  it('leaves a run started without a traceparent with none', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'untraced', input: {} });
    expect(run.traceContext ?? null).toBeNull();
    const [u] = await lease(h.engine, ['tc.untraced']);
    expect(u).toMatchObject({ runId: run.id, traceContext: null });
  });
});
