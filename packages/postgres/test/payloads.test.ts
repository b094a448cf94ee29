import { readdirSync } from 'node:fs';
import { Engine, type FolderBlobStore } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unrecordedReferences } from './blob-test-kit.js';
import { tempBlobs } from './fleet.js';
import { completed, eventually, lease } from './helpers.js';

// Large payloads: values over the threshold go to the blob store and are replaced in PostgreSQL by a
// reference; workers, expressions and readers see the real value. Over the hard limit: refused.

let db: TestDatabase;
let engine: Engine;
let blobs: FolderBlobStore;

const BIG = `
name: big
nodes:
  - { id: a, task_type: big.a }
  - id: b
    task_type: big.b
    input:
      size: $length(nodes.a.output.blob)
      head: "$substring(input.doc, 0, 3)"
edges:
  - { from: a, to: b }
`;

beforeAll(async () => {
  db = await createTestDatabase();
  blobs = tempBlobs();
  engine = new Engine({
    store: new PgStore(db.pool(5)),
    blobs,
    config: { decidePollMs: 20, payloadThresholdBytes: 1024, maxPayloadBytes: 64 * 1024 },
  });
  await engine.start();
  await engine.definitions.deploy('default', BIG);
});
afterAll(async () => {
  await engine?.stop();
  await db?.drop();
});

const stored = async (sql: string, id: string) =>
  ((await db.sql.unsafe(sql, [id])) as unknown as { v: unknown }[])[0]!.v as Record<string, unknown>;

describe('large payloads', () => {
  it('offloads a large input and output, and everyone reading them sees the real values', async () => {
    const doc = `abc${'x'.repeat(5000)}`;
    const run = await engine.runs.start({ namespace: 'default', definition: 'big', input: { doc } });
    const inDb = await stored('SELECT input AS v FROM weft.runs WHERE id = $1', run.id);
    expect(inDb.$weft_blob).toEqual(expect.any(String));
    expect(JSON.stringify(inDb).length).toBeLessThan(200);

    const [a] = await lease(engine, ['big.a']);
    expect(a!.input).toEqual({ doc });
    const blob = 'y'.repeat(20_000);
    await engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(a!, { blob })] });
    const out = await stored(
      "SELECT output AS v FROM weft.tasks WHERE run_id = $1 AND node_id = 'a'",
      run.id,
    );
    expect(out.$weft_blob).toEqual(expect.any(String));

    // The next task's input was computed from the offloaded output and input by expressions.
    const [b] = await lease(engine, ['big.b']);
    expect(b!.input).toEqual({ size: 20_000, head: 'abc' });
    await engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(b!, 'ok')] });
    await eventually(async () => ((await engine.runs.get(run.id)).status === 'completed' ? true : undefined));
    // History carries the output too: offloaded as well, resolved on the way out.
    const history = await engine.context.store.readHistory(run.id, 0, 100);
    const event = history.find((e) => e.type === 'task.completed' && e.nodeId === 'a')!;
    expect(engine.context.payloads.isRef(event.data)).toBe(true);
    expect(await engine.context.payloads.resolve(event.data)).toEqual({ output: { blob } });
    expect(readdirSync((blobs as unknown as { dir: string }).dir).length).toBeGreaterThan(0);
  });

  it('keeps small values in PostgreSQL', async () => {
    const run = await engine.runs.start({
      namespace: 'default',
      definition: 'big',
      input: { doc: 'abcdef' },
    });
    expect(await stored('SELECT input AS v FROM weft.runs WHERE id = $1', run.id)).toEqual({ doc: 'abcdef' });
  });

  it('refuses an input over the hard limit, with a clear error', async () => {
    const error = await engine.runs
      .start({ namespace: 'default', definition: 'big', input: { doc: 'z'.repeat(70 * 1024) } })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'payload_too_large', status: 413 });
    expect((error as Error).message).toMatch(/the run input is 71 KB; the most Weft accepts is 64 KB/);
  });

  it('fails a task whose output is over the hard limit, saying why, instead of refusing the report forever', async () => {
    const run = await engine.runs.start({ namespace: 'default', definition: 'big', input: { doc: 'abc' } });
    const [a] = (await lease(engine, ['big.a'], 10)).filter((t) => t.runId === run.id);
    const { verdicts } = await engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(a!, { blob: 'q'.repeat(80 * 1024) })],
    });
    expect(verdicts[0]!.accepted).toBe(true);
    const r = await eventually(async () => {
      const got = await engine.runs.get(run.id);
      return got.status === 'running' ? undefined : got;
    });
    expect(r.status).toBe('failed');
    expect(r.error?.message).toMatch(/output of task .* is 81 KB; the most Weft accepts is 64 KB/);
  });
});

describe('large signal data', () => {
  it('is offloaded, delivered as the waiting node output, and read back whole', async () => {
    await engine.definitions.deploy(
      'default',
      `name: waits
nodes:
  - { id: wait, kind: wait_for_event, event: doc }
  - { id: use, task_type: waits.use, input: { size: $length(nodes.wait.output.text) } }
edges:
  - { from: wait, to: use }
`,
    );
    const run = await engine.runs.start({ namespace: 'default', definition: 'waits', input: {} });
    const text = 's'.repeat(30_000);
    const sent = await engine.signals.send({
      namespace: 'default',
      runId: run.id,
      name: 'doc',
      data: { text },
      by: 't',
    });
    expect(['delivered', 'kept']).toContain(sent.outcome);
    const [use] = await eventually(async () => {
      const got = await lease(engine, ['waits.use']);
      return got.length > 0 ? got : undefined;
    });
    expect(use!.input).toEqual({ size: 30_000 });
    const history = await engine.context.store.readHistory(run.id, 0, 100);
    const received = history.find((e) => e.type === 'signal.received')!;
    expect(JSON.stringify(received.data).length).toBeLessThan(1000);
    const shown = await engine.context.payloads.resolveFields(received, ['data']);
    expect((shown.data as { data: unknown }).data).toEqual({ text });
    await expect(
      engine.signals.send({
        namespace: 'default',
        runId: run.id,
        name: 'doc',
        data: { text: 'x'.repeat(70_000) },
        by: 't',
      }),
    ).rejects.toMatchObject({ code: 'payload_too_large' });
  });
});

describe('references for the blob deleter', () => {
  it('records every blob reference the runs above hold, by run (invariant 30)', async () => {
    expect(Number((await db.sql`SELECT count(*) AS n FROM weft.blob_refs`)[0]!.n)).toBeGreaterThan(0);
    expect(await unrecordedReferences(db.sql)).toEqual([]);
  });
});
