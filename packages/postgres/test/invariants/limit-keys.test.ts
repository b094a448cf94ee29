import { Engine, type LeasedTask } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed } from '../helpers.js';

// Invariant 29: a node's limit_key splits its semaphores and rate limit by key, each key counted under its own
// advisory lock (invariant 18), and the gated lease takes keys in turn, so one key's backlog cannot starve
// another key's tasks.

const KEYED = `
name: keyed
limits:
  semaphores: { per_tenant: 1 }
nodes:
  - { id: work, task_type: keyed.work, semaphores: [per_tenant], limit_key: input.tenant }
`;

let db: TestDatabase;
const engines: Engine[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  for (let i = 0; i < 3; i++) {
    // Three leasers, each on connections of its own; starts and reports decide inline.
    const engine = new Engine({
      store: new PgStore(db.pool(3)),
      config: { backgroundLoops: false, crossProcessWakeups: false },
    });
    await engine.start();
    engines.push(engine);
  }
  await engines[0]!.definitions.deploy('default', KEYED);
});
afterAll(async () => {
  for (const e of engines) await e.stop();
  await db?.drop();
});

const tenantOf = (t: LeasedTask) => (t.input as { tenant: string }).tenant;

describe('limit keys', () => {
  it("one busy key does not starve another key's few tasks, and each key holds its own permits", async () => {
    const [first] = engines;
    const start = (tenant: string) =>
      first!.runs.start({ namespace: 'default', definition: 'keyed', input: { tenant } });
    for (let i = 0; i < 200; i += 50) await Promise.all(Array.from({ length: 50 }, () => start('busy')));
    await Promise.all([start('quiet'), start('quiet')]);
    const buckets = await db.sql<{ gates: unknown }[]>`SELECT DISTINCT gates FROM weft.queue`;
    expect(buckets).toHaveLength(2); // the two tenants fold into different keys

    const done = { busy: 0, quiet: 0 };
    for (let round = 0; round < 400 && done.quiet < 2; round++) {
      const leased = (
        await Promise.all(
          engines.map((e) =>
            e.tasks.poll({
              namespace: 'default',
              worker: 'w',
              taskTypes: ['keyed.work'],
              max: 10,
              waitMs: 0,
            }),
          ),
        )
      ).flat();
      // Three leasers at once: each key still has one permit, so at most one task of each tenant runs.
      const perTenant = new Map<string, number>();
      for (const t of leased) perTenant.set(tenantOf(t), (perTenant.get(tenantOf(t)) ?? 0) + 1);
      for (const n of perTenant.values()) expect(n).toBeLessThanOrEqual(1);
      for (const t of leased) {
        await first!.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(t, 'ok')] });
        done[tenantOf(t) as 'busy' | 'quiet']++;
      }
    }
    // The quiet tenant's two tasks ran in the first rounds, alongside the busy tenant's, not after its backlog.
    expect(done.quiet).toBe(2);
    expect(done.busy).toBeLessThanOrEqual(3);
  });
});
