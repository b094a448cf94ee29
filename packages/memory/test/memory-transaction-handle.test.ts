import { type DispatchTask, emptyWriteSet, type QueueDispatcher } from '@weft/engine';
import { negotiateDispatch } from '@weft/engine/internal';
import { describe, expect, it } from 'vitest';
import { isMemoryTransactionHandle, MemoryStore } from '../src/index.js';

// MemoryStore's transactional-dispatch capability: a dispatcher joining its transactions registers what
// it sends with `afterCommit`, which happens when the transaction commits and never when it rolls back.

describe('MemoryStore runInTransaction', () => {
  it('runs afterCommit effects at commit, in order, and drops them on rollback', async () => {
    const store = new MemoryStore();
    const seen: string[] = [];
    await store.runInTransaction(async ({ handle }) => {
      if (!isMemoryTransactionHandle(handle)) throw new Error('not a MemoryStore handle');
      handle.afterCommit(() => seen.push('first'));
      handle.afterCommit(() => seen.push('second'));
      expect(seen).toEqual([]); // nothing before the commit
    });
    expect(seen).toEqual(['first', 'second']);
    await expect(
      store.runInTransaction(async ({ handle }) => {
        (handle as { afterCommit(f: () => void): void }).afterCommit(() => seen.push('rolled back'));
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(seen).toEqual(['first', 'second']);
  });

  it('runs an effect at once after a write that committed, and refuses one after the end', async () => {
    const store = new MemoryStore();
    const seen: string[] = [];
    let kept: { afterCommit(f: () => void): void } | null = null;
    await store.runInTransaction(async ({ tx, handle }) => {
      const h = handle as { afterCommit(f: () => void): void };
      kept = h;
      await tx.write(emptyWriteSet(), { commit: true });
      h.afterCommit(() => seen.push('after the commit'));
      expect(seen).toEqual(['after the commit']);
    });
    expect(() => kept!.afterCommit(() => seen.push('late'))).toThrow(/after its transaction ended/);
    expect(seen).toEqual(['after the commit']);
  });

  it('lets a dispatcher that joins negotiate in-transaction dispatch, and one that does not, the repair', () => {
    const store = new MemoryStore();
    const sent: DispatchTask[] = [];
    const joining: QueueDispatcher = {
      kind: 'queue',
      name: 'joins',
      enqueue: async (t) => void sent.push(...t),
      enqueueIn: async (_h, t) => void sent.push(...t),
    };
    const after: QueueDispatcher = {
      kind: 'queue',
      name: 'after',
      enqueue: async (t) => void sent.push(...t),
    };
    expect(negotiateDispatch(store, joining).kind).toBe('in_transaction');
    expect(negotiateDispatch(store, after).kind).toBe('after_commit');
  });
});
