import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempBlobStore } from './blob-test-kit.js';
import { completed, eventually, type Harness, harness, lease } from './helpers.js';

const STEP = `
name: kept
nodes:
  - { id: a, task_type: keep.step }
`;
const OTHER = `
name: kept-long
nodes:
  - { id: a, task_type: keep.other }
`;
const CHILD = `
name: child
nodes:
  - { id: c, task_type: keep.child }
`;
const PARENT = `
name: parent
nodes:
  - { id: sub, kind: sub_workflow, definition: child, input: {} }
  - { id: after, task_type: keep.after }
edges:
  - { from: sub, to: after }
`;

/** Every table that holds rows of a run, by its run column. */
const RUN_TABLES = [
  ['runs', 'id'],
  ['tasks', 'run_id'],
  ['history', 'run_id'],
  ['inbox', 'run_id'],
  ['queue', 'run_id'],
  ['decide_queue', 'run_id'],
  ['timers', 'run_id'],
  ['mailboxes', 'run_id'],
  ['outbox', 'run_id'],
  ['human_tasks', 'run_id'],
  ['idempotency_keys', 'run_id'],
  ['run_attributes', 'run_id'],
  ['sweeper_repairs', 'run_id'],
  ['run_forks', 'run_id'],
  ['run_forks', 'forked_from'],
  ['task_log_attempts', 'run_id'],
  ['task_logs', 'run_id'],
  ['blob_refs', 'run_id'],
] as const;

let h: Harness;
let temp: Awaited<ReturnType<typeof tempBlobStore>>;
const FUTURE = () => new Date(Date.now() + 3_600_000);

beforeAll(async () => {
  // The loop looks often in these tests; policies are set by each test. Small payloads go to the blob store.
  // A blob folder of its own: the blob deleter runs with the loop, and deletes the blobs these runs leave.
  temp = await tempBlobStore();
  h = await harness({ retentionPollMs: 100, payloadThresholdBytes: 1000 }, { blobs: temp.blobs });
  for (const yaml of [STEP, OTHER, CHILD, PARENT]) await h.engine.definitions.deploy('default', yaml);
});
afterAll(async () => {
  await h?.close();
  await temp?.remove();
});

/** Starts a run of `definition` and completes its task; returns the run id. */
async function finishedRun(
  definition: string,
  type: string,
  input: object = {},
  key?: string,
): Promise<string> {
  const run = await h.engine.runs.start({
    namespace: 'default',
    definition,
    input: input as never,
    attributes: { customer: 42 },
    ...(key ? { idempotencyKey: key } : {}),
  });
  const [task] = await eventually(async () => {
    const got = await lease(h.engine, [type], 1);
    return got.length ? got : undefined;
  });
  await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(task!, { ok: 1 })] });
  await eventually(async () => ((await h.store.getRun(run.id))?.status === 'completed' ? true : undefined));
  return run.id;
}

/** Rows each run table still holds for a run. */
async function rowsOf(runId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [table, column] of RUN_TABLES) {
    const [row] = await h.db.sql.unsafe(`SELECT count(*)::int AS n FROM weft.${table} WHERE ${column} = $1`, [
      runId,
    ]);
    out[column === 'run_id' || column === 'id' ? table : `${table}.${column}`] = row!.n;
  }
  return out;
}

describe('purging finished runs', () => {
  it('knows every table that holds a run id, so a new one cannot be forgotten by the purge', async () => {
    const columns = await h.db.sql<{ t: string }[]>`
      SELECT table_name || '.' || column_name AS t FROM information_schema.columns
       WHERE table_schema = 'weft' AND data_type = 'uuid' AND column_name IN ('run_id', 'forked_from')
         AND table_name IN (SELECT table_name FROM information_schema.tables
                             WHERE table_schema = 'weft' AND table_type = 'BASE TABLE')`;
    // Not the run's own rows: a start key belongs to the parent that started the run (its key begins with the
    // parent's id, and goes with the parent), and a limit's hold ends with its rate window, not with the run.
    const listed = new Set([
      ...RUN_TABLES.map(([table, column]) => `${table}.${column}`),
      'start_keys.run_id',
      'holds.run_id',
    ]);
    expect(columns.map((c) => c.t).filter((t) => !listed.has(t))).toEqual([]);
  });

  it('deletes a run with every row that belonged to it, lists its blobs, and counts it first in a dry run', async () => {
    const big = { text: 'x'.repeat(5000) };
    const id = await finishedRun('kept', 'keep.step', big, 'order-1');
    const before = await rowsOf(id);
    const keys = (await h.db.sql<{ key: string }[]>`SELECT key FROM weft.blob_refs WHERE run_id = ${id}`).map(
      (r) => r.key,
    );
    expect(keys.length).toBeGreaterThan(0);
    expect(before.runs).toBe(1);
    expect(before.history).toBeGreaterThan(0);
    expect(before.idempotency_keys).toBe(1);
    expect(before.run_attributes).toBe(1);
    // The rows a repair, a fork and a log line leave beside a run (written here as their writers would).
    await h.db
      .sql`INSERT INTO weft.sweeper_repairs (run_id, namespace, definition, status, idle_ms, changed, first_seq, last_seq)
                   VALUES (${id}, 'default', 'kept', 'running', 1000, '{}', 1, 1)`;
    await h.db
      .sql`INSERT INTO weft.run_forks (run_id, forked_from) VALUES (${id}, gen_random_uuid()), (gen_random_uuid(), ${id})`;
    const withLinks = await rowsOf(id);
    expect(withLinks.sweeper_repairs).toBe(1);
    expect(withLinks['run_forks.forked_from']).toBe(1);
    const dry = await h.engine.retention.purge({
      namespace: 'default',
      before: FUTURE(),
      definition: 'kept',
      dryRun: true,
    });
    expect(dry.matched).toBeGreaterThanOrEqual(1);
    expect(await rowsOf(id)).toEqual(withLinks);

    const out = await h.engine.retention.purge({
      namespace: 'default',
      before: FUTURE(),
      definition: 'kept',
    });
    expect(out.purged).toBeGreaterThanOrEqual(1);
    expect(Object.values(await rowsOf(id)).every((n) => n === 0)).toBe(true);
    // Each blob it referenced is listed, or already deleted by the blob deleter's loop.
    for (const key of keys) {
      const listed = await h.db.sql`SELECT 1 FROM weft.blob_deletions WHERE key = ${key}`;
      expect(listed.length === 1 || !(await temp.blobs.has(key))).toBe(true);
    }
    expect(h.engine.context.stats.runsPurged).toBeGreaterThanOrEqual(1);
    // The key lived as long as its run: it starts a new run now.
    const again = await h.engine.runs.start({
      namespace: 'default',
      definition: 'kept',
      input: {},
      idempotencyKey: 'order-1',
    });
    expect(again.id).not.toBe(id);
    await h.engine.runs.cancel(again.id, 'test');
  });

  it('never purges a child run its live parent still waits on, nor the parent; both once the parent ends', async () => {
    const parent = await h.engine.runs.start({ namespace: 'default', definition: 'parent', input: {} });
    const [c] = await eventually(async () => {
      const got = await lease(h.engine, ['keep.child'], 1);
      return got.length ? got : undefined;
    });
    const childId = c!.runId;
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(c!, 1)] });
    const [after] = await eventually(async () => {
      const got = await lease(h.engine, ['keep.after'], 1);
      return got.length ? got : undefined;
    });
    expect((await h.store.getRun(childId))?.status).toBe('completed');
    await h.engine.retention.purge({ namespace: 'default', before: FUTURE(), definition: 'child' });
    expect((await rowsOf(childId)).runs).toBe(1);

    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(after!, 2)] });
    await eventually(async () =>
      (await h.store.getRun(parent.id))?.status === 'completed' ? true : undefined,
    );
    await h.engine.retention.purge({ namespace: 'default', before: FUTURE(), definition: 'child' });
    await h.engine.retention.purge({ namespace: 'default', before: FUTURE(), definition: 'parent' });
    expect((await rowsOf(childId)).runs).toBe(0);
    expect((await rowsOf(parent.id)).runs).toBe(0);
    const keys = await h.db
      .sql`SELECT count(*)::int AS n FROM weft.start_keys WHERE key LIKE ${`${parent.id}/%`}`;
    expect(keys[0]!.n).toBe(0);
  });

  it('leaves a run with a pending decision, an undelivered effect or a live child for a later round', async () => {
    const sel = { namespace: 'default', before: FUTURE(), definition: 'kept' };
    const pending = await finishedRun('kept', 'keep.step');
    await h.db
      .sql`INSERT INTO weft.decide_queue (run_id, reason, not_before) VALUES (${pending}, 'late event', now() + interval '1 hour')`;
    const undelivered = await finishedRun('kept', 'keep.step');
    await h.db.sql`INSERT INTO weft.outbox (run_id, namespace, destination, kind, message_id, payload)
                   VALUES (${undelivered}, 'default', 'webhook', 'status_callback', 'm-1', '{}')`;
    const parent = await finishedRun('kept', 'keep.step');
    const child = await finishedRun('kept', 'keep.step');
    await h.db.sql`UPDATE weft.tasks SET child_run_id = ${child} WHERE run_id = ${parent}`;
    await h.db
      .sql`UPDATE weft.runs SET status = 'running', finished_at = NULL, parent_run_id = ${parent} WHERE id = ${child}`;
    await h.engine.retention.purge(sel);
    for (const id of [pending, undelivered, parent]) expect((await rowsOf(id)).runs).toBe(1);
    // Once the decision is taken, the effect delivered and the child ended, they go.
    await h.db.sql`DELETE FROM weft.decide_queue WHERE run_id = ${pending}`;
    await h.db.sql`DELETE FROM weft.outbox WHERE run_id = ${undelivered}`;
    await h.db.sql`UPDATE weft.runs SET status = 'completed', finished_at = now() WHERE id = ${child}`;
    await h.engine.retention.purge(sel);
    for (const id of [pending, undelivered, parent, child]) expect((await rowsOf(id)).runs).toBe(0);
  });

  it('the loop keeps each run as long as its policy says: the namespace, or its definition override', async () => {
    const short = await finishedRun('kept', 'keep.step');
    const long = await finishedRun('kept-long', 'keep.other');
    // Both finished two days ago.
    await h.db
      .sql`UPDATE weft.runs SET finished_at = now() - interval '2 days' WHERE id IN (${short}, ${long})`;
    await h.engine.retention.setPolicy('default', { definition: 'kept-long', keep: '30d' });
    await h.engine.retention.setPolicy('default', { keep: '1d' });
    try {
      await eventually(async () => ((await rowsOf(short)).runs === 0 ? true : undefined));
      expect((await rowsOf(long)).runs).toBe(1);
    } finally {
      await h.engine.retention.clearPolicy('default', null);
      await h.engine.retention.clearPolicy('default', 'kept-long');
    }
  });

  it('archives a run before deleting it, payloads resolved, and reads it back once the rows are gone', async () => {
    const big = { text: 'y'.repeat(5000) };
    const id = await finishedRun('kept-long', 'keep.other', big);
    await h.engine.retention.setPolicy('default', { definition: 'kept-long', keep: '1d', archive: true });
    try {
      // An older document of the same run (archived by a purge that rolled back, then retried) is replaced.
      const older = Buffer.from(JSON.stringify({ run: { id, status: 'failed' } }));
      await h.engine.context.payloads.blobs.put(`run-archive-${id}`, older);
      expect((await h.engine.retention.archived(id))?.run.status).toBe('failed');
      await h.engine.retention.purge({ namespace: 'default', before: FUTURE(), definition: 'kept-long' });
      expect((await rowsOf(id)).runs).toBe(0);
      const doc = await h.engine.retention.archived(id);
      expect(doc?.run).toMatchObject({ id, status: 'completed', definition: 'kept-long', input: big });
      expect(doc?.tasks).toHaveLength(1);
      expect(doc?.tasks[0]).toMatchObject({ node_id: 'a', status: 'completed', output: { ok: 1 } });
      expect(doc?.history.map((e) => (e as { seq: number }).seq)).toEqual(doc?.history.map((_, i) => i + 1));
    } finally {
      await h.engine.retention.clearPolicy('default', 'kept-long');
    }
  });

  it('refuses a period it cannot read, or shorter than a minute, saying how to write one', async () => {
    await expect(h.engine.retention.setPolicy('default', { keep: '30' })).rejects.toThrow(/duration/);
    await expect(h.engine.retention.setPolicy('default', { keep: '10s' })).rejects.toThrow(/at least 1m/);
  });
});
