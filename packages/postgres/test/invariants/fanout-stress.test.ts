import { Engine } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completed } from '../helpers.js';

// Invariant 3: a fan-out benchmark once left runs stranded with every branch complete and the join never
// scheduled. Here 40 runs of a 10-branch fan-out with a join are worked by four workers, each on its own
// connections, reporting in batches that mix runs. Every run must finish, every time.

const WIDTH = 10;
const RUNS = 40;
const FAN = `
name: fan
nodes:
  - { id: start, task_type: s.start }
${Array.from({ length: WIDTH }, (_, i) => `  - { id: b${i}, task_type: s.branch }`).join('\n')}
  - { id: join, task_type: s.join }
edges:
  - { from: start, to: [${Array.from({ length: WIDTH }, (_, i) => `b${i}`).join(', ')}] }
${Array.from({ length: WIDTH }, (_, i) => `  - { from: b${i}, to: join }`).join('\n')}
`;

let db: TestDatabase;
const engines: Engine[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  for (let i = 0; i < 4; i++) {
    const engine = new Engine({
      store: new PgStore(db.pool(4)),
      config: { decidePollMs: 20, timerPollMs: 50, leasePollMs: 200, crossProcessWakeups: true },
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

async function worker(engine: Engine, name: string, stop: () => boolean): Promise<number> {
  let done = 0;
  while (!stop()) {
    const tasks = await engine.tasks.poll({
      namespace: 'default',
      worker: name,
      taskTypes: ['s.start', 's.branch', 's.join'],
      max: 8,
      waitMs: 100,
    });
    if (tasks.length === 0) continue;
    // Reports go in two batches so that runs mix and contend across workers.
    const half = Math.ceil(tasks.length / 2);
    for (const batch of [tasks.slice(0, half), tasks.slice(half)]) {
      if (batch.length === 0) continue;
      const { verdicts } = await engine.tasks.report({
        namespace: 'default',
        worker: name,
        reports: batch.map((t) => completed(t, t.nodeId)),
      });
      done += verdicts.filter((v) => v.accepted).length;
    }
  }
  return done;
}

describe('fan-out and join under concurrent workers', () => {
  for (let round = 1; round <= 3; round++) {
    it(`round ${round}: ${RUNS} runs of a ${WIDTH}-branch fan-out all finish`, async () => {
      const main = engines[0]!;
      const ids = await Promise.all(
        Array.from(
          { length: RUNS },
          async () => (await main.runs.start({ namespace: 'default', definition: 'fan', input: {} })).id,
        ),
      );
      let finished = false;
      const until = Date.now() + 30_000;
      const workers = engines.map((e, i) => worker(e, `w${i}`, () => finished || Date.now() > until));
      for (;;) {
        const counts = await main.context.store.countRuns('default', ids);
        if ((counts.completed ?? 0) === RUNS || Date.now() > until) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      finished = true;
      const totals = await Promise.all(workers);
      const counts = await main.context.store.countRuns('default', ids);
      if ((counts.completed ?? 0) !== RUNS) {
        const stuck = await db.sql`
          SELECT r.id, (SELECT count(*) FROM weft.tasks t WHERE t.run_id = r.id AND t.status = 'completed')::int AS done,
                 (SELECT count(*) FROM weft.inbox i WHERE i.run_id = r.id)::int AS inbox,
                 (SELECT count(*) FROM weft.decide_queue d WHERE d.run_id = r.id)::int AS pending,
                 (SELECT json_agg(json_build_object('status', t.status, 'arrivals', t.arrivals)) FROM weft.tasks t WHERE t.run_id = r.id AND t.node_id = 'join') AS join_rows,
                 (SELECT json_agg(h.type || ':' || coalesce(h.node_id, '') ORDER BY h.seq) FROM weft.history h WHERE h.run_id = r.id) AS history
            FROM weft.runs r WHERE r.id = ANY(${ids}::uuid[]) AND r.status <> 'completed'`;
        throw new Error(`stranded runs: ${JSON.stringify(stuck)}`);
      }
      expect(totals.reduce((a, b) => a + b, 0)).toBe(RUNS * (WIDTH + 2));
      console.log(
        'retried transactions',
        JSON.stringify(engines.map((e) => (e.context.store as PgStore).retries)),
      );
    });
  }
});
