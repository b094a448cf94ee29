import { type BlobStore, emptyWriteSet, type StoreTx } from '@weft/engine';
import { BlobUses, offloadWrites, PayloadStore } from '@weft/engine/internal';
import { describe, expect, it } from 'vitest';

// What a transaction storing payloads records for the blob deleter (invariant 30): references only, by the
// run whose row holds them; small values cost nothing.

/** A blob store in memory that counts what it is asked. */
function countingStore(): BlobStore & { blobs: Map<string, Buffer>; calls: string[] } {
  const blobs = new Map<string, Buffer>();
  const calls: string[] = [];
  return {
    name: 'memory',
    blobs,
    calls,
    async put(key, data) {
      calls.push(`put ${key}`);
      if (!blobs.has(key)) blobs.set(key, data);
    },
    async get(key) {
      return blobs.get(key) ?? null;
    },
    async has(key) {
      calls.push(`has ${key}`);
      return blobs.has(key);
    },
  };
}

/** A transaction that only records what `referenceBlobs` is given. */
function recordingTx(): StoreTx & { recorded: { runId: string; key: string }[][] } {
  const recorded: { runId: string; key: string }[][] = [];
  return {
    recorded,
    referenceBlobs: async (uses: readonly { runId: string; key: string }[]) => {
      recorded.push([...uses]);
    },
  } as unknown as StoreTx & { recorded: { runId: string; key: string }[][] };
}

describe('blob uses', () => {
  it('notes the references a pass writes, by run, and nothing for small values', async () => {
    const store = countingStore();
    const payloads = new PayloadStore(store, { thresholdBytes: 100, maxBytes: 100_000 });
    const writes = emptyWriteSet();
    const big = { text: 'b'.repeat(500) };
    writes.runUpdates.push({ runId: 'r1', output: big } as never);
    writes.history.push({ runId: 'r2', seq: 1, type: 'x', data: { small: true } } as never);
    const uses = new BlobUses();
    await offloadWrites(payloads, writes, uses);
    expect(uses.size).toBe(1);
    const tx = recordingTx();
    await uses.guard(tx, payloads);
    const key = (writes.runUpdates[0]!.output as { $weft_blob: string }).$weft_blob;
    expect(tx.recorded).toEqual([[{ runId: 'r1', key }]]);
    // The blob was checked once the uses were recorded.
    expect(store.calls.at(-1)).toBe(`has ${key}`);
  });

  it('puts a blob back when a deleter removed it before the lock was held', async () => {
    const store = countingStore();
    const payloads = new PayloadStore(store, { thresholdBytes: 100, maxBytes: 100_000 });
    const value = { text: 'c'.repeat(500) };
    const ref = await payloads.offload(value, 'a test value');
    const key = (ref as { $weft_blob: string }).$weft_blob;
    store.blobs.delete(key);
    await BlobUses.of('r1', ref, value).guard(recordingTx(), payloads);
    expect(JSON.parse(store.blobs.get(key)!.toString())).toEqual(value);
  });

  it('records nothing and asks nothing of the store for a transaction of small values', async () => {
    const store = countingStore();
    const payloads = new PayloadStore(store, { thresholdBytes: 100, maxBytes: 100_000 });
    const uses = BlobUses.of('r1', { small: 1 }, { small: 1 });
    uses.note('r1', 'text');
    uses.note('r1', null);
    const tx = recordingTx();
    await uses.guard(tx, payloads);
    expect(uses.size).toBe(0);
    expect(tx.recorded).toEqual([]);
    expect(store.calls).toEqual([]);
  });
});
