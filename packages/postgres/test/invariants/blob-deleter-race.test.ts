import type { BlobDeletionOutcome } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceBlobs } from '../../src/ops/blob-refs.js';
import { blobKeyOf, largeValue, tempBlobStore } from '../blob-test-kit.js';
import { eventually, type Harness, harness } from '../helpers.js';

// Invariant 30: a blob the deleter takes is deleted only if no run references it and no writer is
// referencing it; a writer that put the blob before the deleter deleted it waits for the deleter and puts it
// back. The writer and the deleter run on separate connections, ordered by the locks they take (observed in
// pg_locks), not by sleeps. The background loops are idle (a long poll): the test runs the deleter's passes.

const DONE = 'name: race-done\nnodes:\n  - { id: a, kind: noop }\n';
const OPEN = 'name: race-open\nnodes:\n  - { id: a, task_type: race.step, input: {} }\n';
const BACKOFF = { baseMs: 1, maxMs: 1 };

let h: Harness;
let temp: Awaited<ReturnType<typeof tempBlobStore>>;

beforeAll(async () => {
  temp = await tempBlobStore();
  // A busy blob waits one backoff step (1 ms here) before a later pass takes it again.
  h = await harness(
    { retentionPollMs: 3_600_000, payloadThresholdBytes: 1000, blobDeleteBackoffMs: 1 },
    { blobs: temp.blobs },
  );
  for (const yaml of [DONE, OPEN]) await h.engine.definitions.deploy('default', yaml);
});
afterAll(async () => {
  await h?.close();
  await temp?.remove();
});

/** Starts a run that finishes at once with `input`, and purges it: its blob is listed, referenced by none. */
async function listedBlobOf(input: ReturnType<typeof largeValue>): Promise<string> {
  await h.engine.runs.start({ namespace: 'default', definition: 'race-done', input });
  await h.engine.retention.purge({
    namespace: 'default',
    before: new Date(Date.now() + 3_600_000),
    definition: 'race-done',
  });
  const key = blobKeyOf(input);
  const rows = await h.db.sql`SELECT 1 FROM weft.blob_deletions WHERE key = ${key}`;
  expect(rows.length).toBe(1);
  expect(await temp.blobs.has(key)).toBe(true);
  return key;
}

/** Advisory locks some connection is waiting for. */
async function advisoryWaits(): Promise<number> {
  const [row] = await h.db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`;
  return row!.n;
}

describe('blobs of purged runs and the runs that reference them again', () => {
  it('a blob being referenced while the deleter runs is never lost', async () => {
    const input = largeValue('race');
    const key = await listedBlobOf(input);
    let writer: Promise<{ id: string }> | null = null;
    let writerDone = false;
    let sawWriterWait = false;
    const pass = await h.store.blobDeletions.deleteListed(
      100,
      async (keys): Promise<BlobDeletionOutcome> => {
        // The deleter has checked: nothing references the blob. Now a writer offloads the same value (the
        // blob is there, so its put writes nothing) and stores a reference to it, on its own connection.
        expect(keys).toContain(key);
        writer = h.engine.runs.start({ namespace: 'default', definition: 'race-open', input });
        writer.then(() => {
          writerDone = true;
        });
        // Until the writer waits for this transaction's lock on the key, or (without the lock) commits.
        await eventually(async () => {
          if (await advisoryWaits()) sawWriterWait = true;
          return sawWriterWait || writerDone ? true : undefined;
        });
        for (const k of keys) await temp.blobs.delete(k);
        return { deleted: keys, failed: [] };
      },
      BACKOFF,
    );
    expect(pass.deleted).toContain(key);
    const run = await writer!;
    // The run references the blob, and the blob is there: the writer waited for the deleter, found the
    // blob gone and put it back before committing.
    const [row] = await h.db.sql<{ input: { $weft_blob: string } }[]>`
      SELECT input FROM weft.runs WHERE id = ${run.id}`;
    expect(row!.input.$weft_blob).toBe(key);
    expect(await temp.blobs.has(key)).toBe(true);
    expect(sawWriterWait).toBe(true);
    const refs = await h.db.sql`SELECT 1 FROM weft.blob_refs WHERE key = ${key} AND run_id = ${run.id}`;
    expect(refs.length).toBe(1);
    // And the deleter leaves it alone from now on: the run references it.
    await h.engine.retention.purge({
      namespace: 'default',
      before: new Date(Date.now() + 3_600_000),
      definition: 'race-done',
    });
    await h.engine.blobDeleter.pass();
    expect(await temp.blobs.has(key)).toBe(true);
  });

  it('a writer holding the lock keeps the deleter off the blob, and its reference keeps it once committed', async () => {
    const key = await listedBlobOf(largeValue('held'));
    // A run that will hold a reference to the blob (a signal carrying the same value, say).
    const runId = (await h.engine.runs.start({ namespace: 'default', definition: 'race-open', input: {} }))
      .id;
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let locked!: () => void;
    const lockHeld = new Promise<void>((r) => {
      locked = r;
    });
    // A writer's transaction on its own connection: the reference recorded under the key's shared lock,
    // then held open (as while the rest of its writes go out) until the test releases it.
    const writer = h.db.sql.begin(async (tx) => {
      await referenceBlobs(tx, [{ runId, key }]);
      locked();
      await released;
    });
    await lockHeld;
    const during = await h.engine.blobDeleter.pass();
    expect(during?.deleted).not.toContain(key);
    expect(await temp.blobs.has(key)).toBe(true);
    expect((await h.db.sql`SELECT 1 FROM weft.blob_deletions WHERE key = ${key}`).length).toBe(1);
    release();
    await writer;
    // Once the busy blob's wait has run out.
    await h.db.sql`UPDATE weft.blob_deletions SET not_before = now() WHERE key = ${key}`;
    const after = await h.engine.blobDeleter.pass();
    expect(after?.referenced).toBeGreaterThanOrEqual(1);
    expect(await temp.blobs.has(key)).toBe(true);
    expect((await h.db.sql`SELECT 1 FROM weft.blob_deletions WHERE key = ${key}`).length).toBe(0);
  });
});
