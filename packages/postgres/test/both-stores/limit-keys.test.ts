import type { Engine, LeasedTask } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed } from '../helpers.js';
import { STORES, type StoreHarness, storeHarness } from './stores.js';

// Limit keys on every store Weft ships: each key has its own window and permits, and keys take turns.

const RATED = `
name: keyed-rate
limits:
  rates: { mail_per_tenant: { limit: 1, per: 1h } }
nodes:
  - { id: mail, task_type: kr.mail, rate_limit: mail_per_tenant, limit_key: input.tenant }
`;
const PERMITS = `
name: keyed-permits
limits:
  semaphores: { one_per_tenant: 1 }
nodes:
  - { id: work, task_type: kp.work, semaphores: [one_per_tenant], limit_key: input.tenant }
`;

const tenantOf = (t: LeasedTask) => (t.input as { tenant: string }).tenant;

function poll(engine: Engine, type: string, max = 10): Promise<LeasedTask[]> {
  return engine.tasks.poll({ namespace: 'default', worker: 'w', taskTypes: [type], max, waitMs: 0 });
}

describe.each(STORES)('limit keys on the %s store', (kind) => {
  let h: StoreHarness;
  beforeAll(async () => {
    h = await storeHarness(kind, { backgroundLoops: false });
    await h.engine.definitions.deploy('default', RATED);
    await h.engine.definitions.deploy('default', PERMITS);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('gives each key its own rate window', async () => {
    const start = (tenant: string) =>
      h.engine.runs.start({ namespace: 'default', definition: 'keyed-rate', input: { tenant } });
    for (const tenant of ['a', 'a', 'b', 'b']) await start(tenant);
    const first = await poll(h.engine, 'kr.mail');
    expect(first.map(tenantOf).sort()).toEqual(['a', 'b']);
    // Each key's window is full for an hour: the window is the limit's, found under the key's gate, so the
    // holds stay counted however many leases look at them.
    for (let round = 0; round < 3; round++) {
      await start('a');
      expect(await poll(h.engine, 'kr.mail')).toEqual([]);
    }
  });

  it("takes keys in turn: one key's backlog does not hold back another key's task", async () => {
    const start = (tenant: string) =>
      h.engine.runs.start({ namespace: 'default', definition: 'keyed-permits', input: { tenant } });
    for (let i = 0; i < 80; i++) await start('busy');
    await start('quiet');
    const leased = await poll(h.engine, 'kp.work', 2);
    expect(leased.map(tenantOf).sort()).toEqual(['busy', 'quiet']);
    await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: leased.map((t) => completed(t)),
    });
  });
});
