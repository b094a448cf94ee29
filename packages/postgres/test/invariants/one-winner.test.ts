import { Engine } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually } from '../helpers.js';

// Invariant 1: decisions on one run are serialised by the run's row lock. Ten branches completing at the same
// instant, each reported on its own connection, must fire the join exactly once. Without the lock, concurrent
// decisions each see the others' branches as running and the join's arrival list loses updates: the join
// never fires, or fires twice.

const WIDTH = 10;
const FAN = `
name: fan10
nodes:
  - { id: start, task_type: fan.start }
${Array.from({ length: WIDTH }, (_, i) => `  - { id: b${i}, task_type: fan.branch }`).join('\n')}
  - { id: join, task_type: fan.join }
edges:
  - { from: start, to: [${Array.from({ length: WIDTH }, (_, i) => `b${i}`).join(', ')}] }
${Array.from({ length: WIDTH }, (_, i) => `  - { from: b${i}, to: join }`).join('\n')}
`;

let db: TestDatabase;
const engines: Engine[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  for (let i = 0; i < WIDTH; i++) {
    // One engine per reporter, each with its own connections: real concurrent transactions.
    const engine = new Engine({
      store: new PgStore(db.pool(2)),
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

describe('one decision at a time per run', () => {
  it('ten concurrent completions on ten connections fire the join exactly once', async () => {
    for (let round = 0; round < 5; round++) {
      const main = engines[0]!;
      const run = await main.runs.start({ namespace: 'default', definition: 'fan10', input: {} });
      const [start] = await main.tasks.poll({
        namespace: 'default',
        worker: 'w',
        taskTypes: ['fan.start'],
        max: 1,
        waitMs: 0,
      });
      await main.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(start!)] });
      const branches = await main.tasks.poll({
        namespace: 'default',
        worker: 'w',
        taskTypes: ['fan.branch'],
        max: WIDTH,
        waitMs: 0,
      });
      expect(branches).toHaveLength(WIDTH);
      // All ten reports at once, each through its own engine and connection pool.
      await Promise.all(
        branches.map((t, i) =>
          engines[i]!.tasks.report({ namespace: 'default', worker: `w${i}`, reports: [completed(t, i)] }),
        ),
      );
      const [join] = await eventually(
        async () => {
          const got = await main.tasks.poll({
            namespace: 'default',
            worker: 'w',
            taskTypes: ['fan.join'],
            max: 5,
            waitMs: 0,
          });
          return got.length > 0 ? got : undefined;
        },
        10_000,
        'the join to be scheduled',
      );
      await main.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(join!)] });
      const finished = await eventually(async () => {
        const r = await main.runs.get(run.id);
        return r.status === 'running' ? undefined : r;
      });
      expect(finished.status).toBe('completed');
      const joins =
        await db.sql`SELECT attempt FROM weft.tasks WHERE run_id = ${run.id}::uuid AND node_id = 'join'`;
      expect(joins).toHaveLength(1);
      const history = await main.context.store.readHistory(run.id, 0, 1000);
      expect(history.filter((e) => e.type === 'task.scheduled' && e.nodeId === 'join')).toHaveLength(1);
      expect(history.filter((e) => e.type === 'task.completed')).toHaveLength(WIDTH + 2);
      expect(history.map((e) => e.seq)).toEqual(history.map((_, i) => i + 1));
    }
  });
});
