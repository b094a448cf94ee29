import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, lease } from '../helpers.js';
import { STORES, type StoreHarness, storeHarness } from './stores.js';

// A heartbeat refused (a stale lease, a wrong attempt, a finished task) is answered `lost` and counted, but
// not written to the run's history: in ordinary races between a worker's heartbeats and its own report
// they are many, and would hide the refusals that matter. A refused report is still recorded.

const ONE = `
name: beats
nodes:
  - { id: a, task_type: beats.step, retry: { max_attempts: 2, backoff: fixed, delay: 10ms } }
`;

describe.each(STORES)('refused heartbeats on the %s store', (kind) => {
  let h: StoreHarness;
  beforeAll(async () => {
    h = await storeHarness(kind);
    await h.engine.definitions.deploy('default', ONE);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('are answered lost and counted, not written to history; refused reports still are', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'beats', input: {} });
    const [task] = await eventually(async () => {
      const got = await lease(h.engine, ['beats.step'], 1);
      return got.length === 1 ? got : undefined;
    });
    const held = {
      runId: task!.runId,
      taskId: task!.id,
      attempt: task!.attempt,
      leaseToken: task!.leaseToken,
    };
    expect(await h.engine.tasks.heartbeat('default', 'w', [held])).toEqual({ held: [task!.id], lost: [] });
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(task!, 'done')] });
    await eventually(async () =>
      (await h.engine.runs.get(run.id))?.status === 'completed' ? true : undefined,
    );

    const before = h.engine.context.stats.heartbeatsRefused;
    // A finished task, a stale token, a wrong attempt: each is lost.
    const beats = [
      held,
      { ...held, leaseToken: '00000000-0000-4000-8000-000000000000' },
      { ...held, attempt: held.attempt + 1 },
    ];
    for (const beat of beats)
      expect(await h.engine.tasks.heartbeat('default', 'w', [beat])).toEqual({ held: [], lost: [task!.id] });
    expect(h.engine.context.stats.heartbeatsRefused - before).toBe(3);

    // A late report is refused and recorded; its decision is what lets us wait for the history to settle.
    const late = await h.engine.tasks.report({
      namespace: 'default',
      worker: 'w',
      reports: [completed(task!, 'again')],
    });
    expect(late.verdicts[0]).toMatchObject({ accepted: false });
    const refused = await eventually(async () => {
      const history = await h.engine.context.store.readHistory(run.id, 0, 1000);
      const found = history.filter((e) => e.type === 'task.report_refused');
      return found.length > 0 ? found : undefined;
    });
    expect(refused.map((e) => (e.data as { report?: string }).report)).toEqual(['complete']);
    expect(h.engine.context.stats.reportsRefused).toBeGreaterThan(0);
  });
});
