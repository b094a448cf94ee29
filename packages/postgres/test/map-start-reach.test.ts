import { Engine } from '@weft/engine';
import { connect, PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A map writes one row per item when it is reached, in one statement. That statement's work has to follow
// the items, not their square: it once found the rows it had absorbed as duplicates with an anti-join of its
// input against the rows it inserted, and with hash joins off (Weft's connections) that is a nested loop,
// items x items (5.7 s for 5,000 items, with the run's lock held). The work is counted by PostgreSQL
// (auto_explain with ANALYZE: the rows every plan node produced and the rows its filters threw away, as
// many times as it ran), not timed.

const MAP = (name: string) => `
name: ${name}
nodes:
  - id: each
    kind: map
    items: input.items
    concurrency: 10
    task: { task_type: reach.item, input: { n: item } }
`;

interface PlanNode {
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Join Filter'?: number;
  Plans?: PlanNode[];
}

/** Rows the plan's nodes produced or filtered out, over all their loops. */
function rowsHandled(node: PlanNode): number {
  const loops = node['Actual Loops'] ?? 1;
  const own =
    ((node['Actual Rows'] ?? 0) +
      (node['Rows Removed by Filter'] ?? 0) +
      (node['Rows Removed by Join Filter'] ?? 0)) *
    loops;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + rowsHandled(child), 0);
}

let db: TestDatabase;
/** Rows handled by each statement that inserted attempts, in the order they ran. */
const inserts: number[] = [];
let engine: Engine;
let pool: ReturnType<typeof connect>;

beforeAll(async () => {
  db = await createTestDatabase();
  // Every statement of the engine's own connections is explained to the client (the test database only).
  for (const setting of [
    `session_preload_libraries = 'auto_explain'`,
    'auto_explain.log_min_duration = 0',
    'auto_explain.log_analyze = on',
    `auto_explain.log_format = 'json'`,
    'client_min_messages = log',
  ])
    await db.sql.unsafe(`ALTER DATABASE ${db.name} SET ${setting}`);
  pool = connect(db.url, {
    max: 4,
    onNotice: (notice) => {
      const text = notice.message ?? '';
      const json = text.slice(text.indexOf('{'));
      if (!text.startsWith('duration') || !json.includes('INSERT INTO weft.tasks')) return;
      const explained = JSON.parse(json) as { 'Query Text': string; Plan: PlanNode };
      if (explained['Query Text'].includes('INSERT INTO weft.tasks (run_id, id, node_id'))
        inserts.push(rowsHandled(explained.Plan));
    },
  });
  engine = new Engine({ store: new PgStore(pool), config: { decidePollMs: 20, timerPollMs: 1000 } });
  await engine.start();
});
afterAll(async () => {
  await engine?.stop();
  await pool?.end({ timeout: 5 });
  await db?.drop();
});

/** Rows handled per item by the largest insert of attempts while a map of `items` items is reached. */
async function insertPerItem(items: number): Promise<number> {
  const name = `reach-${items}`;
  await engine.definitions.deploy('default', MAP(name));
  inserts.length = 0;
  const run = await engine.runs.start({
    namespace: 'default',
    definition: name,
    input: { items: Array.from({ length: items }, (_, i) => i) },
  });
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const [row] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM weft.tasks WHERE run_id = ${run.id}::uuid AND node_id = 'each'`;
    if (row!.n > items) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  // The map's row and one row per item, written by one insert.
  expect(inserts.length).toBeGreaterThan(0);
  return Math.max(...inserts) / items;
}

describe("the insert of a map's items", () => {
  it('handles a number of rows per item that does not grow with the items (500 and 5,000)', async () => {
    const small = await insertPerItem(500);
    const large = await insertPerItem(5000);
    console.log(`rows handled per item: ${small.toFixed(1)} (500 items), ${large.toFixed(1)} (5,000 items)`);
    // A nested loop of the input against the inserted rows handles items/2 rows per item: 250 and 2,500.
    expect(small).toBeLessThan(50);
    expect(large).toBeLessThan(50);
    expect(large / small).toBeLessThan(1.5);
  });
});
