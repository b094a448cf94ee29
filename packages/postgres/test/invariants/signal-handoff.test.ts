import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers.js';
import { type Cluster, cluster, finish, take } from './cluster.js';

// A signal sent at the same instant as the run reaches the node waiting for it is never lost and never
// taken twice. The report that reaches the wait (and adds it to the mailbox's waiters) and the signal
// (which looks for a waiter, or keeps itself) are decided on different engines and connections; both
// hold the run's row lock while they read and write the mailbox, so one sees the other's change:
// either the signal finds the waiter, or the waiter finds the kept signal.

const RUNS = 30;
const HANDOFF = `
name: handoff
nodes:
  - { id: prep, task_type: handoff.prep }
  - { id: wait, kind: wait_for_event, event: go, correlation: input.key }
  - { id: done, task_type: handoff.done, input: { got: nodes.wait.output } }
edges:
  - { from: prep, to: wait }
  - { from: wait, to: done }
`;

let c: Cluster;
beforeAll(async () => {
  c = await cluster(3);
  await c.engines[0]!.definitions.deploy('default', HANDOFF);
});
afterAll(async () => {
  await c?.close();
});

describe('a signal sent as the run reaches its wait', () => {
  it('is taken exactly once, whichever is decided first', async () => {
    const [main] = c.engines;
    const runs = await Promise.all(
      Array.from({ length: RUNS }, (_, i) =>
        main!.runs.start({ namespace: 'default', definition: 'handoff', input: { key: `k${i}` } }),
      ),
    );
    const preps = await take(main!, ['handoff.prep'], RUNS);
    expect(preps).toHaveLength(RUNS);
    const byRun = new Map(preps.map((t) => [t.runId, t]));
    const outcomes = await Promise.all(
      runs.flatMap((run, i) => [
        finish(c.engines[i % 3]!, [byRun.get(run.id)!]).then(() => 'reported'),
        c.engines[(i + 1) % 3]!.signals.send({
          namespace: 'default',
          runId: run.id,
          name: 'go',
          correlation: `k${i}`,
          data: { i },
          by: 'test',
        }).then((s) => s.outcome),
      ]),
    );
    const kept = outcomes.filter((o) => o === 'kept').length;
    const delivered = outcomes.filter((o) => o === 'delivered').length;
    console.log(`signals kept then taken: ${kept}, delivered to a waiting node: ${delivered}`);
    expect(kept + delivered).toBe(RUNS);
    const done = await eventually(
      async () => {
        const got = await take(main!, ['handoff.done'], RUNS);
        return got.length === RUNS ? got : undefined;
      },
      10_000,
      'every run to take its signal',
    );
    for (const t of done) {
      const i = runs.findIndex((r) => r.id === t.runId);
      expect(t.input).toEqual({ got: { i } });
    }
    await finish(main!, done);
    for (const run of runs) {
      const history = await main!.context.store.readHistory(run.id, 0, 100);
      expect(history.filter((e) => e.type === 'signal.received')).toHaveLength(1);
      expect(history.filter((e) => e.type === 'signal.delivered')).toHaveLength(1);
      expect(history.map((e) => e.seq)).toEqual(history.map((_, k) => k + 1));
    }
    expect(await main!.context.store.countRuns('default')).toEqual({ completed: RUNS });
    expect((await c.db.sql`SELECT count(*)::int AS n FROM weft.mailboxes`)[0]!.n).toBe(0);
  });
});
