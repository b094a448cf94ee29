import type { Json } from '@weft/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, failed, lease } from '../helpers.js';
import { BOOKING } from './booking.js';
import { STORES, type StoreHarness, storeHarness } from './stores.js';

// Saga compensation behaves the same on every store Weft ships.

describe.each(STORES)('compensation on the %s store', (kind) => {
  let h: StoreHarness;
  beforeAll(async () => {
    h = await storeHarness(kind);
    await h.engine.definitions.deploy('default', BOOKING);
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Leases one task of a type (waiting for it) and reports it. */
  async function one(type: string, outcome: (input: Json) => 'fail' | Json): Promise<Json> {
    const [task] = await eventually(async () => {
      const got = await lease(h.engine, [type], 1);
      return got.length > 0 ? got : undefined;
    });
    const result = outcome(task!.input);
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [result === 'fail' ? failed(task!, 'declined', false) : completed(task!, result)],
    });
    return task!.input;
  }

  it('runs the compensations in reverse order as tasks, then ends the run failed', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'booking', input: {} });
    await one('book', () => ({ ref: 'F1' }));
    await one('book', () => ({ ref: 'H1' }));
    await one('pay', () => 'fail');
    expect((await h.engine.runs.get(run.id)).status).toBe('compensating');
    const first = await one('unbook', () => null);
    const second = await one('unbook', () => null);
    expect([first, second]).toEqual([{ ref: 'H1' }, { ref: 'F1' }]);
    const final = await eventually(async () => {
      const r = await h.engine.runs.get(run.id);
      return r.status === 'failed' ? r : undefined;
    });
    expect(final.error).toMatchObject({
      node: 'pay',
      compensation: { status: 'completed', compensated: ['hotel', 'flight'] },
    });
  });
});
