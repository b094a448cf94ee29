import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine, FolderBlobStore } from '@weft/engine';
import { armFault } from '@weft/engine/internal';
import { ListDispatcher } from '@weft/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers.js';
import { freshStore, STORES } from './stores.js';

// With a dispatcher that enqueues after commit, a crash between a commit and its enqueue leaves a task
// queued with no message; the engine's repair sends it again. A compensating run's compensations are
// tasks like any other, so their lost messages are repaired too, on every store Weft ships.

const BOOKING = `
name: booking
nodes:
  - { id: flight, task_type: book, compensate: { task_type: unbook } }
  - { id: pay, task_type: pay, retry: { max_attempts: 1 } }
edges:
  - { from: flight, to: pay }
`;

describe.each(STORES)('dispatch repair of compensations on the %s store', (kind) => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('sends a compensation whose message was lost between commit and enqueue again', async () => {
    const { store, close } = await freshStore(kind);
    cleanups.push(close);
    const dispatcher = new ListDispatcher();
    const engine = new Engine({
      store,
      dispatcher,
      blobs: new FolderBlobStore(mkdtempSync(join(tmpdir(), 'weft-redispatch-'))),
      config: {
        decidePollMs: 50,
        timerPollMs: 50,
        leasePollMs: 100,
        redispatchPollMs: 100,
        redispatchAfterMs: 300,
      },
    });
    await engine.start();
    cleanups.push(() => engine.stop());
    await engine.definitions.deploy('default', BOOKING);
    let crashes = 0;
    const stop = dispatcher.consume(engine, ['book', 'pay', 'unbook'], (task) => {
      if (task.taskType !== 'pay') return { ok: task.nodeId };
      // The next enqueue after this failure is the compensation's: it is lost to a crash after commit.
      const disarm = armFault('dispatch.after-commit', () => {
        crashes++;
        disarm();
        throw new Error('crashed after commit, before enqueue');
      });
      cleanups.push(disarm);
      throw new Error('card declined');
    });
    cleanups.push(stop);
    const run = await engine.runs.start({ namespace: 'default', definition: 'booking', input: {} });
    const final = await eventually(async () => {
      const r = await engine.runs.get(run.id);
      return r.status === 'failed' ? r : undefined;
    }, 15_000);
    expect(crashes).toBe(1);
    expect(final.error).toMatchObject({
      node: 'pay',
      compensation: { status: 'completed', compensated: ['flight'] },
    });
    expect(engine.redispatcher.resent).toBeGreaterThanOrEqual(1);
    const unbook = dispatcher.sent.filter((m) => m.runId === run.id && m.taskType === 'unbook');
    expect(unbook.length).toBeGreaterThanOrEqual(1);
  });
});
