import { isWeftError } from '@weft/core';
import type { Engine } from '@weft/engine';
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
// run running and would be decided. The race proves something only when both sides won some runs: rounds
// of runs are raced until each side has won at least once (a slow machine can tilt one round one way).

const RUNS = 36;
const MAX_ROUNDS = 5;
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

type Winner = 'signal' | 'timeout';

/** Starts a round of runs and reads each one's timeout from its wait node. */
async function startRound(main: Engine): Promise<{ runs: { id: string }[]; deadlines: Map<string, number> }> {
  const runs = await Promise.all(
    Array.from({ length: RUNS }, () =>
      main.runs.start({ namespace: 'default', definition: 'race', input: {} }),
    ),
  );
  const deadlines = new Map<string, number>();
  for (const run of runs) {
    const wait = (await main.context.store.listTasks(run.id)).find((t) => t.nodeId === 'wait')!;
    deadlines.set(run.id, new Date((wait.input as { timeout_at: string }).timeout_at).getTime());
  }
  return { runs, deadlines };
}

/** Sends each run's signal around its timeout, through the engines in turn; returns each send's outcome. */
async function race(runs: { id: string }[], deadlines: Map<string, number>): Promise<string[]> {
  const dbNow = (await c.engines[0]!.context.store.now()).getTime();
  const skew = Date.now() - dbNow;
  return Promise.all(
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
}

/** Waits until every timer has fired and every decision has landed. */
async function settle(): Promise<void> {
  await eventually(async () =>
    (await c.db.sql`SELECT count(*)::int AS n FROM weft.timers`)[0]!.n === 0 ? true : undefined,
  );
  await eventually(async () =>
    (await c.db.sql`SELECT count(*)::int AS n FROM weft.decide_queue`)[0]!.n === 0 ? true : undefined,
  );
}

/** Checks that one run resolved exactly one way, consistently everywhere; returns which way. */
async function resolvedOnce(main: Engine, runId: string, i: number, outcome: string): Promise<Winner> {
  const history = await main.context.store.readHistory(runId, 0, 100);
  const resolutions = history.filter((e) => e.type === 'signal.delivered' || e.type === 'signal.timed_out');
  expect(
    resolutions.map((e) => e.type),
    `run ${i} (signal ${outcome})`,
  ).toHaveLength(1);
  expect(history.map((e) => e.seq)).toEqual(history.map((_, k) => k + 1));
  const tasks = await main.context.store.listTasks(runId);
  const status = Object.fromEntries(tasks.map((t) => [t.nodeId, t.status]));
  const wait = tasks.find((t) => t.nodeId === 'wait')!;
  if (resolutions[0]!.type === 'signal.delivered') {
    expect(outcome).toBe('delivered');
    expect([status.on_signal, status.on_timeout]).toEqual(['queued', 'skipped']);
    expect(wait.output).toEqual({ i });
    return 'signal';
  }
  expect(outcome).toBe('kept');
  expect([status.on_signal, status.on_timeout]).toEqual(['skipped', 'queued']);
  expect(wait.output).toEqual({ timed_out: true });
  return 'timeout';
}

describe('a signal and a timeout at the same moment', () => {
  it('resolve exactly one way, every time', async () => {
    const main = c.engines[0]!;
    const won = { signal: 0, timeout: 0 };
    let rounds = 0;
    while (rounds < MAX_ROUNDS && (won.signal === 0 || won.timeout === 0)) {
      rounds++;
      const { runs, deadlines } = await startRound(main);
      const outcomes = await race(runs, deadlines);
      await settle();
      for (const [i, run] of runs.entries()) won[await resolvedOnce(main, run.id, i, outcomes[i]!)]++;
    }
    console.log(
      `signal won ${won.signal}, timeout won ${won.timeout} of ${rounds * RUNS} in ${rounds} round(s)`,
    );
    expect(won.signal, 'runs the signal won: the race never went its way').toBeGreaterThan(0);
    expect(won.timeout, 'runs the timeout won: the race never went its way').toBeGreaterThan(0);
    // Finish the branches: every run completes.
    for (;;) {
      const tasks = await take(main, ['race.signal', 'race.timeout']);
      if (tasks.length === 0) break;
      await finish(main, tasks);
    }
    const counts = await main.context.store.countRuns('default');
    expect(counts.completed).toBe(rounds * RUNS);
  });
});
