import { type Destination, type OutboxRow, sinkDestination } from '@weft/engine';
import { BLOB_REF } from '@weft/engine/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unrecordedReferences } from './blob-test-kit.js';
import { tempBlobs } from './fleet.js';
import { completed, eventually, type Harness, harness, lease } from './helpers.js';

// Large payloads meet the outbox. A value over the threshold is kept in the blob store and referenced from
// PostgreSQL, but whatever leaves a run through the outbox (a child's input, an event's payload, a status
// callback) goes to a receiver that cannot read the blob store: it carries the value itself. The child
// keeps its large input offloaded like any run input, and its large output reaches the parent as a value.

const PARENT = `
name: big-parent
on_status: { sink: bus }
nodes:
  - { id: make, task_type: pe.make }
  - { id: child, kind: sub_workflow, definition: big-child, input: { blob: nodes.make.output.blob } }
  - { id: tell, kind: event, sink: bus, topic: made, payload: { blob: nodes.make.output.blob } }
edges:
  - { from: make, to: [child, tell] }
output: { back: nodes.child.output.echo }
`;
const CHILD = `
name: big-child
nodes:
  - { id: echo, task_type: pe.echo, input: { blob: input.blob } }
output: { echo: nodes.echo.output }
`;

function recorder(name: string): Destination & { rows: OutboxRow[] } {
  const rows: OutboxRow[] = [];
  return {
    name: sinkDestination(name),
    rows,
    async deliver(batch) {
      rows.push(...batch);
      return batch.map(() => ({ kind: 'delivered' as const }));
    },
  };
}

const hasRef = (value: unknown): boolean => JSON.stringify(value ?? null).includes(BLOB_REF);

let h: Harness;
const bus = recorder('bus');
const blob = `b${'x'.repeat(6000)}`;

beforeAll(async () => {
  h = await harness(
    { payloadThresholdBytes: 1024, relayPollMs: 50 },
    { blobs: tempBlobs(), destinations: [bus] },
  );
  await h.engine.definitions.deploy('default', CHILD);
  await h.engine.definitions.deploy('default', PARENT);
});
afterAll(async () => {
  await h?.close();
});

describe('large payloads through the outbox', () => {
  it('reach sinks and child runs as values, and come back from the child as a value', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'big-parent', input: {} });
    const [make] = await lease(h.engine, ['pe.make']);
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(make!, { blob })],
    });
    // The worker's output is offloaded in the task row...
    const [made] = await h.db.sql<{ output: unknown }[]>`
      SELECT output FROM weft.tasks WHERE run_id = ${run.id}::uuid AND node_id = 'make'`;
    expect(hasRef(made!.output)).toBe(true);
    // ...but the event carries the value.
    const event = await eventually(async () =>
      bus.rows.find((r) => r.runId === run.id && r.payload.kind === 'publish' && r.payload.topic === 'made'),
    );
    expect(hasRef(event.payload)).toBe(false);
    expect(event.payload).toMatchObject({ message: { data: { blob } } });
    // The child start in the outbox carries the value; the child's run row keeps it offloaded.
    const child = await eventually(async () => {
      const [row] = await h.db.sql<{ id: string; input: unknown }[]>`
        SELECT id, input FROM weft.runs WHERE parent_run_id = ${run.id}::uuid`;
      return row;
    });
    expect(hasRef(child.input)).toBe(true);
    expect(await h.engine.context.payloads.resolve(child.input as never)).toEqual({ blob });
    // The child's worker gets the value.
    const [echo] = await eventually(async () => {
      const got = await lease(h.engine, ['pe.echo']);
      return got.length > 0 ? got : undefined;
    });
    expect(echo!.input).toEqual({ blob });
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(echo!, { blob, by: 'child' })],
    });
    // The child's output reaches the parent as the value (its inbox held a reference the decision fetched).
    const done = await eventually(async () => {
      const r = await h.engine.runs.get(run.id);
      return r.status === 'running' ? undefined : r;
    });
    expect(done.status).toBe('completed');
    expect(await h.engine.context.payloads.resolve(done.output)).toEqual({ back: { blob, by: 'child' } });
    const [subTask] = await h.db.sql<{ output: unknown }[]>`
      SELECT output FROM weft.tasks WHERE run_id = ${run.id}::uuid AND node_id = 'child'`;
    expect(hasRef(subTask!.output)).toBe(true);
    // The status callback carries the run's output as a value too.
    const status = await eventually(async () =>
      bus.rows.find(
        (r) =>
          r.runId === run.id && r.payload.kind === 'publish' && r.payload.message.type === 'run.completed',
      ),
    );
    expect(hasRef(status.payload)).toBe(false);
    expect(status.payload).toMatchObject({ message: { data: { output: { back: { blob, by: 'child' } } } } });
    // Nothing left in the outbox refers to the blob store.
    const rows = await h.db.sql<{ payload: unknown }[]>`SELECT payload FROM weft.outbox`;
    expect(rows.filter((r) => hasRef(r.payload))).toEqual([]);
  });
});

describe('references for the blob deleter', () => {
  it('records every blob reference the parent and child runs hold, each under its own run (invariant 30)', async () => {
    expect(await unrecordedReferences(h.db.sql)).toEqual([]);
  });
});
