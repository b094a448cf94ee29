import type { LeasedTask } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempBlobs } from '../fleet.js';
import { completed, eventually, type Harness, harness } from '../helpers.js';

// Child runs meet limits. A parent stopped while its child holds a semaphore permit stops the child through
// the outbox, and the child's attempt gives its permit back in the transaction that cancels (or terminates)
// it, with no lease to wait out (invariant 15). A namespace's quota counts children, but never refuses one:
// it belongs to a run the quota already admitted.

const KID = `
name: kid
limits:
  semaphores: { slot: 1 }
nodes:
  - { id: work, task_type: cl.work, semaphores: [slot] }
`;
const PARENT = 'name: parent\nnodes:\n  - { id: sub, kind: sub_workflow, definition: kid }\n';

let h: Harness;
beforeAll(async () => {
  // Leases last long: a permit that came back did so because its attempt ended, not because it expired.
  h = await harness({ leaseMs: 120_000, relayPollMs: 30, relayBackoffMs: 30 }, { blobs: tempBlobs() });
  await h.engine.definitions.deploy('default', KID);
  await h.engine.definitions.deploy('default', PARENT);
});
afterAll(async () => {
  await h?.close();
});

const poll = (ns = 'default') =>
  h.engine.tasks.poll({ namespace: ns, worker: 'w', taskTypes: ['cl.work'], max: 5, waitMs: 0 });

async function leaseOne(ns = 'default'): Promise<LeasedTask> {
  return eventually(async () => (await poll(ns))[0], 10_000, 'a cl.work task');
}

async function permitsHeld(ns = 'default'): Promise<number> {
  const [row] = (await h.db.sql`
    SELECT coalesce(sum(h.amount), 0)::int AS n FROM weft.holds h
      JOIN weft.tasks t ON t.run_id = h.run_id AND t.id = h.task_id AND t.attempt = h.attempt
     WHERE h.gate = ${`semaphore:${ns}:slot`} AND t.status = 'running'`) as unknown as [{ n: number }];
  return row.n;
}

async function childOf(parentId: string): Promise<string> {
  return eventually(async () => {
    const [row] = await h.db.sql<{ id: string }[]>`
      SELECT id FROM weft.runs WHERE parent_run_id = ${parentId}::uuid`;
    return row?.id;
  });
}

async function statusOf(runId: string, want: string): Promise<void> {
  await eventually(async () => ((await h.engine.runs.get(runId)).status === want ? true : undefined));
}

describe('child runs under limits', () => {
  for (const stop of ['cancel', 'terminate'] as const) {
    it(`a ${stop}led parent's child gives its semaphore permit back as it stops`, async () => {
      const parent = await h.engine.runs.start({ namespace: 'default', definition: 'parent', input: {} });
      const child = await childOf(parent.id);
      const held = await leaseOne();
      expect(held.runId).toBe(child);
      expect(await permitsHeld()).toBe(1);
      // Another run needing the permit waits for it.
      const waiting = await h.engine.runs.start({ namespace: 'default', definition: 'kid', input: {} });
      expect(await poll()).toEqual([]);
      if (stop === 'cancel') await h.engine.runs.cancel(parent.id, 'test', 'no longer needed');
      else await h.engine.control.terminate(parent.id, { by: 'test', reason: 'stop now' });
      await statusOf(child, stop === 'cancel' ? 'cancelled' : 'terminated');
      expect(await permitsHeld()).toBe(0);
      // The permit is free at once: the waiting run's task is leased now, long before any lease ran out.
      const next = await leaseOne();
      expect(next.runId).toBe(waiting.id);
      // The stopped child's worker is refused.
      const { verdicts } = await h.engine.tasks.report({
        namespace: 'default',
        worker: 'w',
        reports: [completed(held)],
      });
      expect(verdicts[0]!.accepted).toBe(false);
      await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(next)] });
      await statusOf(waiting.id, 'completed');
    });
  }

  it('counts children against the quota without refusing them', async () => {
    await h.engine.definitions.deploy('quota', KID);
    await h.engine.definitions.deploy('quota', PARENT);
    await h.engine.limits.set({ namespace: 'quota', kind: 'quota', name: '', max: 1, windowMs: null });
    const parent = await h.engine.runs.start({ namespace: 'quota', definition: 'parent', input: {} });
    // The parent fills the quota; its child starts all the same.
    const child = await childOf(parent.id);
    expect((await h.engine.runs.get(child)).namespace).toBe('quota');
    // Parent and child both count: a start from outside is refused.
    await expect(
      h.engine.runs.start({ namespace: 'quota', definition: 'kid', input: {} }),
    ).rejects.toMatchObject({ code: 'quota_exceeded' });
    const task = await leaseOne('quota');
    await h.engine.tasks.report({ namespace: 'quota', worker: 'w', reports: [completed(task)] });
    await statusOf(parent.id, 'completed');
    expect((await h.engine.runs.get(child)).status).toBe('completed');
  });
});
