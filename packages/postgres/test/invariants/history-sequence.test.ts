import { Engine } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed, eventually } from '../helpers.js';

// Invariant 20: seq is MAX(seq) + 1, which is only safe under the run's row lock, read after the lock is
// held. Six workers finishing six branches at the same instant, each on its own connection, must give seven
// completion events (the fork and its six branches) with distinct, gap-free sequence numbers. Read in the
// locking statement's snapshot, two reporters number their events the same; the history's primary key then
// refuses one of them (and without the key, a reader following the log by `seq > cursor` would skip one).

const WIDTH = 6;
const FAN = `
name: six
nodes:
  - { id: fork, task_type: six.fork }
${Array.from({ length: WIDTH }, (_, i) => `  - { id: b${i}, task_type: six.branch }`).join('\n')}
  - { id: join, kind: noop }
edges:
  - { from: fork, to: [${Array.from({ length: WIDTH }, (_, i) => `b${i}`).join(', ')}] }
${Array.from({ length: WIDTH }, (_, i) => `  - { from: b${i}, to: join }`).join('\n')}
`;

let db: TestDatabase;
const engines: Engine[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  for (let i = 0; i < WIDTH; i++) {
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

describe('history sequence under concurrent completions', () => {
  it('six concurrent completions give seven completion events with distinct, gap-free sequence numbers', async () => {
    for (let round = 0; round < 5; round++) {
      const main = engines[0]!;
      const run = await main.runs.start({ namespace: 'default', definition: 'six', input: {} });
      const poll = (types: string[]) =>
        main.tasks.poll({ namespace: 'default', worker: 'w', taskTypes: types, max: WIDTH, waitMs: 0 });
      const [fork] = await poll(['six.fork']);
      await main.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(fork!)] });
      const branches = await poll(['six.branch']);
      expect(branches).toHaveLength(WIDTH);
      // All six at the same instant, each through its own engine and connection pool.
      const results = await Promise.all(
        branches.map((t, i) =>
          engines[i]!.tasks.report({ namespace: 'default', worker: `w${i}`, reports: [completed(t, i)] }),
        ),
      );
      for (const r of results) expect(r.verdicts[0]!.accepted).toBe(true);
      await eventually(async () => ((await main.runs.get(run.id)).status === 'completed' ? true : undefined));
      const history = await main.context.store.readHistory(run.id, 0, 1000);
      const completions = history.filter((e) => e.type === 'task.completed');
      expect(completions).toHaveLength(WIDTH + 1);
      expect(new Set(completions.map((e) => e.seq)).size).toBe(WIDTH + 1);
      expect(history.map((e) => e.seq)).toEqual(history.map((_, i) => i + 1));
    }
  });
});
