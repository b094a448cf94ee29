import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually, failed, type Harness, harness, lease } from './helpers.js';

// The stuck-run sweeper (invariant 26, defence in depth): in a healthy system it finds nothing, even with no
// idle threshold at all; a run stranded by a lost event is found, repaired by a decision that looks at every
// node again, recorded in the run's history, and counted.

const CHAIN = `
name: chain
nodes:
  - { id: a, task_type: sw.a }
  - { id: b, task_type: sw.b, input: { got: nodes.a.output } }
edges:
  - { from: a, to: b }
`;

let h: Harness;
beforeAll(async () => {
  h = await harness({ sweepPollMs: 3_600_000 });
  await h.engine.definitions.deploy('default', CHAIN);
  await h.engine.definitions.deploy(
    'default',
    'name: retrying\nnodes:\n  - { id: a, task_type: sw.r, retry: { max_attempts: 3, delay: 1h } }\n',
  );
  await h.engine.definitions.deploy(
    'default',
    'name: asking\nnodes:\n  - { id: q, kind: human, title: Q }\n',
  );
});
afterAll(async () => {
  await h?.close();
});

async function decidedAll() {
  await eventually(async () => {
    const [row] = (await h.db.sql`SELECT count(*)::int AS n FROM weft.decide_queue`) as unknown as [
      { n: number },
    ];
    return row.n === 0 ? true : undefined;
  });
}

describe('stuck-run sweeper', () => {
  it('finds nothing in a healthy system, even with no idle threshold', async () => {
    // Runs at every kind of rest: a queued task, a running task, a retry timer, an open human task, done.
    await h.engine.runs.start({ namespace: 'default', definition: 'chain', input: {} });
    await h.engine.runs.start({ namespace: 'default', definition: 'chain', input: {} });
    const [running] = await lease(h.engine, ['sw.a'], 1);
    void running;
    await h.engine.runs.start({ namespace: 'default', definition: 'retrying', input: {} });
    const [r] = await lease(h.engine, ['sw.r']);
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [failed(r!, 'try later')] });
    await h.engine.runs.start({ namespace: 'default', definition: 'asking', input: {} });
    const done = await h.engine.runs.start({ namespace: 'default', definition: 'chain', input: {} });
    const [a] = (await lease(h.engine, ['sw.a'])).filter((t) => t.runId === done.id);
    if (a) await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(a, 1)] });
    await decidedAll();
    expect(await h.engine.sweeper.round(0)).toEqual([]);
    expect(h.engine.sweeper.stats.repaired).toBe(0);
  });

  it('repairs a run whose completion event was lost, records it, and counts it', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'chain', input: {} });
    const [a] = (await lease(h.engine, ['sw.a'], 10)).filter((t) => t.runId === run.id);
    // Plant the bug: the task completes, but no event and no decision request go with it.
    await h.db.sql`UPDATE weft.tasks SET status = 'completed', output = '{"n": 7}', finished_at = now()
                    WHERE run_id = ${run.id}::uuid AND id = ${a!.id}::uuid`;
    // Not idle long enough yet.
    expect(await h.engine.sweeper.round(60_000)).toEqual([]);
    await h.db.sql`UPDATE weft.history SET at = at - interval '10 minutes' WHERE run_id = ${run.id}::uuid`;
    expect(await h.engine.sweeper.round(5 * 60_000)).toEqual([run.id]);
    expect(h.engine.sweeper.stats.repaired).toBe(1);
    const history = await h.store.readHistory(run.id, 0, 100);
    expect(history.find((e) => e.type === 'run.repaired')).toMatchObject({ data: { by: 'sweeper' } });
    // The first test left an older sw.b task queued; leases come oldest first.
    const b = (await lease(h.engine, ['sw.b'])).find((t) => t.runId === run.id);
    expect(b).toMatchObject({ runId: run.id, input: { got: { n: 7 } } });
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(b!)] });
    const finished = await eventually(async () => {
      const r = await h.engine.runs.get(run.id);
      return r.status === 'running' ? undefined : r;
    });
    expect(finished.status).toBe('completed');
    // Repaired once: a second round finds nothing.
    expect(await h.engine.sweeper.round(0)).toEqual([]);
  });

  it('completes a run whose last step finished but whose completion was lost', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'chain', input: {} });
    const [a] = (await lease(h.engine, ['sw.a'], 10)).filter((t) => t.runId === run.id);
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(a!, 1)] });
    const [b] = (await lease(h.engine, ['sw.b'], 10)).filter((t) => t.runId === run.id);
    await h.db.sql`UPDATE weft.tasks SET status = 'completed', output = '2', finished_at = now()
                    WHERE run_id = ${run.id}::uuid AND id = ${b!.id}::uuid`;
    expect(await h.engine.sweeper.round(0)).toEqual([run.id]);
    const r = await h.engine.runs.get(run.id);
    expect(r).toMatchObject({ status: 'completed', output: { b: 2 } });
  });
});
