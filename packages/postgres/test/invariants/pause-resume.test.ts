import { Engine, type LeasedTask } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually } from '../helpers.js';

// Invariant 5: a paused run is not evaluated, so completions that land during the pause wait in its inbox
// with their wake-ups dropped. Resume must ask for a decision in the same transaction as the status flip, or
// the run sits at running forever with every branch done. And pause must really stop new work: a task queued
// before the pause is not handed to a worker until resume.

const WIDTH = 4;
const FAN = `
name: pausable
nodes:
  - { id: start, task_type: p.start }
${Array.from({ length: WIDTH }, (_, i) => `  - { id: b${i}, task_type: p.branch }`).join('\n')}
  - { id: join, task_type: p.join }
edges:
  - { from: start, to: [${Array.from({ length: WIDTH }, (_, i) => `b${i}`).join(', ')}] }
${Array.from({ length: WIDTH }, (_, i) => `  - { from: b${i}, to: join }`).join('\n')}
`;

let db: TestDatabase;
const engines: Engine[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  for (let i = 0; i < WIDTH + 1; i++) {
    // One engine per actor, each with its own connections; only the first runs background loops.
    const engine = new Engine({
      store: new PgStore(db.pool(3)),
      config: { decidePollMs: 20, backgroundLoops: i === 0, crossProcessWakeups: false },
    });
    await engine.start();
    engines.push(engine);
  }
  await engines[0]!.definitions.deploy('default', FAN);
});
afterAll(async () => {
  for (const e of engines) await e.stop();
  await db?.drop();
});

function poll(engine: Engine, types: string[], max = WIDTH): Promise<LeasedTask[]> {
  return engine.tasks.poll({ namespace: 'default', worker: 'w', taskTypes: types, max, waitMs: 0 });
}

describe('pause, completions during the pause, resume', () => {
  it('keeps the results that land while paused, starts nothing new, and completes after resume', async () => {
    for (let round = 0; round < 4; round++) {
      const main = engines[0]!;
      const run = await main.runs.start({ namespace: 'default', definition: 'pausable', input: {} });
      const [start] = await poll(main, ['p.start'], 1);
      await main.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(start!)] });
      // Every branch but the last is leased before the pause; the last stays queued.
      const leased = await poll(main, ['p.branch'], WIDTH - 1);
      expect(leased).toHaveLength(WIDTH - 1);

      // The pause and the completions of the leased branches at once, each on its own connection.
      const [paused, ...reports] = await Promise.all([
        engines[WIDTH]!.control.pause(run.id, { by: 'ops', reason: `round ${round}` }),
        ...leased.map((t, i) =>
          engines[i + 1]!.tasks.report({ namespace: 'default', worker: `w${i}`, reports: [completed(t, i)] }),
        ),
      ]);
      expect(paused.status).toBe('paused');
      // Leased tasks may finish while paused, and their results are kept.
      for (const r of reports) expect(r.verdicts[0]!.accepted).toBe(true);
      const done = await db.sql`
        SELECT node_id FROM weft.tasks WHERE run_id = ${run.id}::uuid AND node_id LIKE 'b%' AND status = 'completed'`;
      expect(done).toHaveLength(WIDTH - 1);

      // Nothing new starts: the queued branch is not leased, and no decision runs while paused.
      expect(await poll(engines[1]!, ['p.branch', 'p.join'])).toEqual([]);
      await new Promise((r) => setTimeout(r, 150)); // several rounds of the background decider
      expect(await poll(engines[2]!, ['p.branch', 'p.join'])).toEqual([]);
      expect((await main.runs.get(run.id)).status).toBe('paused');

      const resumed = await engines[WIDTH]!.control.resume(run.id, { by: 'ops' });
      expect(resumed.status).toBe('running');
      const [last] = await eventually(
        async () => {
          const got = await poll(engines[1]!, ['p.branch']);
          return got.length > 0 ? got : undefined;
        },
        5000,
        'the queued branch to be handed out after resume',
      );
      await engines[1]!.tasks.report({
        namespace: 'default',
        worker: 'w',
        reports: [completed(last!, 'last')],
      });
      const [join] = await eventually(
        async () => {
          const got = await poll(main, ['p.join'], 1);
          return got.length > 0 ? got : undefined;
        },
        5000,
        'the join to be scheduled after resume',
      );
      await main.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(join!, 'joined')] });
      const finished = await eventually(async () => {
        const r = await main.runs.get(run.id);
        return r.status === 'completed' ? r : undefined;
      });
      expect(finished.output).toEqual({ join: 'joined' });

      const history = await main.context.store.readHistory(run.id, 0, 1000);
      expect(history.map((e) => e.seq)).toEqual(history.map((_, i) => i + 1));
      const types = history.map((e) => e.type);
      expect(types.filter((t) => t === 'task.completed')).toHaveLength(WIDTH + 2);
      expect(types.indexOf('run.paused')).toBeLessThan(types.indexOf('run.resumed'));
      expect(history.find((e) => e.type === 'run.paused')!.data).toEqual({
        by: 'ops',
        reason: `round ${round}`,
      });
    }
  });
});
