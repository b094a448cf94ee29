import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers.js';
import { type Cluster, cluster, finish, take } from './cluster.js';

// A join after a switch completes: the branches the switch did not take arrive at the join as skips
// (dead-path elimination), so `join: all` waits only for branches that can still arrive. The branches taken
// finish at the same instant, each reported through its own engine and connections, and the join still fires
// exactly once. Without the skip arrivals the join waits for a branch that never comes, and the run hangs at
// running with nothing left to wake it (invariant 4).

const RUNS = 24;
const FORK = `
name: fork
nodes:
  - { id: route, kind: switch, expression: input.path }
  - { id: a1, task_type: fork.branch }
  - { id: a2, task_type: fork.branch }
  - { id: a3, task_type: fork.branch }
  - { id: b, task_type: fork.branch }
  - { id: c, kind: wait, duration: 10ms }
  - { id: join, task_type: fork.join, input: { path: input.path } }
edges:
  - { from: route, to: [a1, a2, a3], case: a }
  - { from: route, to: b, case: b }
  - { from: route, to: c, default: true }
  - { from: a1, to: join }
  - { from: a2, to: join }
  - { from: a3, to: join }
  - { from: b, to: join }
  - { from: c, to: join }
`;

let c: Cluster;
beforeAll(async () => {
  c = await cluster(3);
  await c.engines[0]!.definitions.deploy('default', FORK);
});
afterAll(async () => {
  await c?.close();
});

describe('a join after a switch', () => {
  it('completes whichever branch was taken, and fires once when taken branches finish together', async () => {
    const [main] = c.engines;
    const paths = ['a', 'b', 'c'];
    const runs = await Promise.all(
      Array.from({ length: RUNS }, (_, i) =>
        main!.runs.start({ namespace: 'default', definition: 'fork', input: { path: paths[i % 3]! } }),
      ),
    );
    // Every branch task of every run, reported at once: one report per task, spread over the engines.
    const branches = await eventually(async () => {
      const got = await take(main!, ['fork.branch'], 500);
      return got.length > 0 ? got : undefined;
    });
    expect(branches).toHaveLength((RUNS / 3) * 4);
    await Promise.all(branches.map((t, i) => finish(c.engines[i % 3]!, [t])));
    const joins = await eventually(
      async () => {
        const counts = await c.db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM weft.tasks WHERE node_id = 'join' AND status = 'queued'`;
        return counts[0]!.n === RUNS ? await take(main!, ['fork.join'], 500) : undefined;
      },
      10_000,
      'every join to be scheduled',
    );
    expect(joins).toHaveLength(RUNS);
    await finish(main!, joins);
    const counts = await main!.context.store.countRuns('default');
    expect(counts).toEqual({ completed: RUNS });
    for (const run of runs) {
      const history = await main!.context.store.readHistory(run.id, 0, 200);
      expect(history.filter((e) => e.type === 'task.scheduled' && e.nodeId === 'join')).toHaveLength(1);
      expect(history.map((e) => e.seq)).toEqual(history.map((_, k) => k + 1));
    }
  });
});
