import { isWeftError } from '@weft/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers.js';
import { type Cluster, cluster, finish, sleep, take } from './cluster.js';

// A signal and the timeout of the node waiting for it, arriving at the same moment, resolve exactly one
// way. The signal is decided by SignalService under the run's row lock; the timeout by a timer poller
// (three replicas here, each on its own connections) through the inbox and a decider holding the same
// lock. Whichever is decided first ends the wait; the other finds it no longer waiting and does nothing:
// a late timeout is ignored, a late signal is kept for a later wait.
//
// Each run's signal is sent from 100 ms before to 200 ms after its timeout, from a different engine than the one that
// started it. The branches are task nodes left unfinished until the end, so a stale timer still finds the
// run running and would be decided.

const RUNS = 36;
const RACE = `
name: race
nodes:
  - { id: wait, kind: wait_for_event, event: go, timeout: 1s }
  - { id: on_signal, task_type: race.signal }
  - { id: on_timeout, task_type: race.timeout }
edges:
  - { from: wait, to: on_signal }
  - { from: wait, to: on_timeout, on: timeout }
`;

let c: Cluster;
beforeAll(async () => {
  c = await cluster(3);
  await c.engines[0]!.definitions.deploy('default', RACE);
});
afterAll(async () => {
  await c?.close();
});

describe('a signal and a timeout at the same moment', () => {
  it('resolve exactly one way, every time', async () => {
    const [main] = c.engines;
    const runs = await Promise.all(
      Array.from({ length: RUNS }, () =>
        main!.runs.start({ namespace: 'default', definition: 'race', input: {} }),
      ),
    );
    const deadlines = new Map<string, number>();
    for (const run of runs) {
      const wait = (await main!.context.store.listTasks(run.id)).find((t) => t.nodeId === 'wait')!;
      deadlines.set(run.id, new Date((wait.input as { timeout_at: string }).timeout_at).getTime());
    }
    const dbNow = (await main!.context.store.now()).getTime();
    const skew = Date.now() - dbNow;
    const outcomes = await Promise.all(
      runs.map(async (run, i) => {
        const offset = ((i % 13) - 4) * 25; // -100 ms .. +200 ms around the timeout (the poller fires a little late)
        await sleep(deadlines.get(run.id)! + skew + offset - Date.now());
        try {
          const sent = await c.engines[i % 3]!.signals.send({
            namespace: 'default',
            runId: run.id,
            name: 'go',
            data: { i },
            by: 'race',
          });
          return sent.outcome;
        } catch (e) {
          if (isWeftError(e, 'run_finished')) return 'refused';
          throw e;
        }
      }),
    );
    // Let every timer fire and every decision land before looking.
    await eventually(async () =>
      (await c.db.sql`SELECT count(*)::int AS n FROM weft.timers`)[0]!.n === 0 ? true : undefined,
    );
    await eventually(async () =>
      (await c.db.sql`SELECT count(*)::int AS n FROM weft.decide_queue`)[0]!.n === 0 ? true : undefined,
    );
    let signalled = 0;
    let timedOut = 0;
    for (const [i, run] of runs.entries()) {
      const history = await main!.context.store.readHistory(run.id, 0, 100);
      const resolutions = history.filter(
        (e) => e.type === 'signal.delivered' || e.type === 'signal.timed_out',
      );
      expect(
        resolutions.map((e) => e.type),
        `run ${i} (signal ${outcomes[i]})`,
      ).toHaveLength(1);
      const tasks = await main!.context.store.listTasks(run.id);
      const status = Object.fromEntries(tasks.map((t) => [t.nodeId, t.status]));
      const wait = tasks.find((t) => t.nodeId === 'wait')!;
      if (resolutions[0]!.type === 'signal.delivered') {
        signalled++;
        expect(outcomes[i]).toBe('delivered');
        expect([status.on_signal, status.on_timeout]).toEqual(['queued', 'skipped']);
        expect(wait.output).toEqual({ i });
      } else {
        timedOut++;
        expect(outcomes[i]).toBe('kept');
        expect([status.on_signal, status.on_timeout]).toEqual(['skipped', 'queued']);
        expect(wait.output).toEqual({ timed_out: true });
      }
      expect(history.map((e) => e.seq)).toEqual(history.map((_, k) => k + 1));
    }
    console.log(`signal won ${signalled}, timeout won ${timedOut} of ${RUNS}`);
    // Finish the branches: every run completes.
    for (;;) {
      const tasks = await take(main!, ['race.signal', 'race.timeout']);
      if (tasks.length === 0) break;
      await finish(main!, tasks);
    }
    const counts = await main!.context.store.countRuns('default');
    expect(counts.completed).toBe(RUNS);
  });
});
