import type { Json } from '@weft/core';
import { type BlobStore, FolderBlobStore } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobKeyOf, largeValue, tempBlobStore, unrecordedReferences } from './blob-test-kit.js';
import { completed, eventually, type Harness, harness, lease } from './helpers.js';

// Blobs of purged runs are deleted from the blob store by the blob deleter once no run references them
// (invariant 30). The background loops are left idle (a long poll): each test runs the deleter's passes.

const DONE = 'name: blob-done\nnodes:\n  - { id: a, kind: noop }\n';
const OPEN = 'name: blob-open\nnodes:\n  - { id: a, task_type: blob.step }\n';
const ASK = `
name: blob-ask
nodes:
  - { id: ask, kind: human, title: Answer }
  - { id: after, task_type: blob.after, input: { got: nodes.ask.output } }
edges:
  - { from: ask, to: after }
`;

/** A folder store whose deletes fail while `failing` is set. */
class FlakyStore extends FolderBlobStore {
  failing = false;
  override async delete(key: string): Promise<void> {
    if (this.failing) throw new Error('the blob store is unavailable');
    return super.delete(key);
  }
}

let h: Harness;
let blobs: FlakyStore;
let removeFolder: () => Promise<void>;
const FUTURE = () => new Date(Date.now() + 3_600_000);

beforeAll(async () => {
  const temp = await tempBlobStore();
  removeFolder = temp.remove;
  blobs = new FlakyStore(temp.blobs.dir);
  h = await harness(
    { retentionPollMs: 3_600_000, payloadThresholdBytes: 1000, blobDeleteBackoffMs: 1 },
    { blobs: blobs as BlobStore },
  );
  for (const yaml of [DONE, OPEN, ASK]) await h.engine.definitions.deploy('default', yaml);
});
afterAll(async () => {
  await h?.close();
  await removeFolder?.();
});

async function startDone(input: Json): Promise<string> {
  const run = await h.engine.runs.start({ namespace: 'default', definition: 'blob-done', input });
  expect((await h.engine.runs.get(run.id)).status).toBe('completed');
  return run.id;
}

async function purgeDone(): Promise<void> {
  await h.engine.retention.purge({ namespace: 'default', before: FUTURE(), definition: 'blob-done' });
}

async function listed(key: string): Promise<{ attempts: number; error: string | null } | undefined> {
  const rows = await h.db.sql<{ attempts: number; error: string | null }[]>`
    SELECT attempts, last_error AS error FROM weft.blob_deletions WHERE key = ${key}`;
  return rows[0];
}

/** Passes until the list holds nothing due (a pass takes a batch), once any backoff has run out. */
async function drain(): Promise<void> {
  await h.db.sql`UPDATE weft.blob_deletions SET not_before = now()`;
  for (let i = 0; i < 10; i++) {
    const pass = await h.engine.blobDeleter.pass();
    if (!pass || pass.deleted.length + pass.failed.length + pass.referenced + pass.busy === 0) return;
  }
}

describe('the blob deleter', () => {
  it("deletes a purged run's blob no other run references, and takes it off the list", async () => {
    const input = largeValue('unique');
    const key = blobKeyOf(input);
    await startDone(input);
    expect(await blobs.has(key)).toBe(true);
    await purgeDone();
    expect(await listed(key)).toBeDefined();
    const deletedBefore = h.engine.context.stats.blobsDeleted;
    await drain();
    expect(await blobs.has(key)).toBe(false);
    expect(await listed(key)).toBeUndefined();
    expect(h.engine.context.stats.blobsDeleted).toBeGreaterThan(deletedBefore);
    const refs = await h.db.sql`SELECT count(*)::int AS n FROM weft.blob_refs WHERE key = ${key}`;
    expect(refs[0]!.n).toBe(0);
  });

  it('keeps a blob a kept run shares with a purged one, and takes it off the list', async () => {
    const input = largeValue('shared');
    const key = blobKeyOf(input);
    await startDone(input);
    const kept = await h.engine.runs.start({ namespace: 'default', definition: 'blob-open', input });
    await purgeDone();
    expect(await listed(key)).toBeDefined();
    await drain();
    expect(await blobs.has(key)).toBe(true);
    expect(await listed(key)).toBeUndefined();
    // Once the kept run is purged too, nothing references the blob: it goes.
    await h.engine.runs.cancel(kept.id, 'test');
    await h.engine.retention.purge({ namespace: 'default', before: FUTURE(), definition: 'blob-open' });
    expect(await listed(key)).toBeDefined();
    await drain();
    expect(await blobs.has(key)).toBe(false);
  });

  it('leaves a blob listed, with its error, when the store fails, and deletes it on a later pass', async () => {
    const input = largeValue('flaky');
    const key = blobKeyOf(input);
    await startDone(input);
    await purgeDone();
    const failuresBefore = h.engine.context.stats.blobDeleteFailures;
    blobs.failing = true;
    try {
      const pass = await h.engine.blobDeleter.pass();
      expect(pass?.failed.map((f) => f.key)).toContain(key);
    } finally {
      blobs.failing = false;
    }
    expect(await blobs.has(key)).toBe(true);
    expect(await listed(key)).toEqual({ attempts: 1, error: 'the blob store is unavailable' });
    expect(h.engine.context.stats.blobDeleteFailures).toBeGreaterThan(failuresBefore);
    // The run's history event carrying its input is a blob of its own, failed alike.
    expect((await h.engine.blobDeleter.backlog())?.failing).toBeGreaterThanOrEqual(1);
    // The backoff (1 ms here) has passed by the next pass.
    await drain();
    expect(await blobs.has(key)).toBe(false);
    expect(await listed(key)).toBeUndefined();
  });

  it('counts listed blobs in the workload the metrics read', async () => {
    const input = largeValue('counted');
    await startDone(input);
    await purgeDone();
    const snapshot = await h.store.workload();
    expect(snapshot.blobDeletions?.listed).toBeGreaterThanOrEqual(1);
    await drain();
    expect((await h.store.workload()).blobDeletions?.listed).toBe(0);
  });

  it("records the references of a person's answer, a worker's output and a fork, each under its run", async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'blob-ask', input: {} });
    const [task] = await eventually(async () => {
      const list = await h.engine.inbox.list({ namespace: 'default', runId: run.id, limit: 10 });
      return list.length > 0 ? list : undefined;
    });
    await h.engine.inbox.claim('default', task!.taskId, 'ann');
    await h.engine.inbox.complete('default', task!.taskId, 'ann', largeValue('answer'));
    const [after] = await eventually(async () => {
      const got = await lease(h.engine, ['blob.after'], 1);
      return got.length ? got : undefined;
    });
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(after!, largeValue('output'))],
    });
    await eventually(async () =>
      (await h.engine.runs.get(run.id)).status === 'completed' ? true : undefined,
    );
    const fork = await h.engine.forks.fork({ namespace: 'default', runId: run.id, upToNode: 'after' });
    const keys = async (id: string) =>
      (await h.db.sql<{ key: string }[]>`SELECT key FROM weft.blob_refs WHERE run_id = ${id}`).map(
        (r) => r.key,
      );
    expect(await keys(run.id)).toEqual(
      expect.arrayContaining([blobKeyOf(largeValue('answer')), blobKeyOf(largeValue('output'))]),
    );
    expect((await keys(fork.id)).length).toBeGreaterThan(0);
    expect(await unrecordedReferences(h.db.sql)).toEqual([]);
  });

  it('deletes a blob whose only reference row names a run that is gone, and the row with it', async () => {
    const input = largeValue('orphan');
    const key = blobKeyOf(input);
    await startDone(input);
    await purgeDone();
    // As a report refused because its run's purge overtook it leaves behind.
    await h.db.sql`INSERT INTO weft.blob_refs (run_id, key) VALUES (gen_random_uuid(), ${key})`;
    await drain();
    expect(await blobs.has(key)).toBe(false);
    expect(await h.db.sql`SELECT 1 FROM weft.blob_refs WHERE key = ${key}`).toHaveLength(0);
  });

  it('a purge racing the deleter lists the blob again, so the last reference going never strands it', async () => {
    const shared = largeValue('relisted');
    const key = blobKeyOf(shared);
    const other = largeValue('other');
    await startDone(shared);
    await startDone(other);
    const kept = await h.engine.runs.start({ namespace: 'default', definition: 'blob-open', input: shared });
    await purgeDone();
    await h.engine.runs.cancel(kept.id, 'test');
    let purge: Promise<unknown> | null = null;
    let purged = false;
    const pass = await h.store.blobDeletions.deleteListed(
      100,
      async (keys) => {
        // The pass has found `key` referenced by the kept run and holds its list row. Now that run's purge
        // deletes its last reference, on another connection, and lists the blob.
        purge = h.engine.retention
          .purge({ namespace: 'default', before: FUTURE(), definition: 'blob-open' })
          .then(() => {
            purged = true;
          });
        await eventually(async () => {
          const [row] = await h.db.sql<{ n: number }[]>`
            SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`;
          return row!.n > 0 || purged ? true : undefined;
        });
        for (const k of keys) await blobs.delete(k);
        return { deleted: keys, failed: [] };
      },
      { baseMs: 1, maxMs: 1 },
    );
    expect(pass.referenced).toBeGreaterThanOrEqual(1);
    await purge;
    // Nothing references the blob now, and it is listed: a later pass deletes it.
    expect(await listed(key)).toBeDefined();
    await drain();
    expect(await blobs.has(key)).toBe(false);
  });
});
