import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, fleet, pollAll } from '../fleet.js';
import { completed, eventually } from '../helpers.js';

// Invariant 18: a rate limit (N starts of a task per window, per key) holds when ten dispatchers lease at
// once; the starts inside the window are counted under the key's advisory lock. A task refused by the limit
// stays on the queue, held back until the window has room.

const LIMIT = 3;
// Enough that some are left for the waiting poll even when a busy machine spreads the first polls over
// two windows.
const RUNS = 12;
let f: Fleet;
beforeAll(async () => {
  f = await fleet(10);
  await f.main.definitions.deploy(
    'default',
    `name: mail
limits:
  rates: { mail: { limit: ${LIMIT}, per: 1500ms } }
nodes:
  - { id: send, task_type: mail.send, rate_limit: mail }
`,
  );
});
afterAll(async () => {
  await f?.close();
});

async function startsInWindow(): Promise<number> {
  const [row] = (await f.db.sql`
    SELECT count(*)::int AS n FROM weft.holds
     WHERE gate = 'rate:default:mail' AND taken_at > now() - interval '1500 milliseconds'`) as unknown as [
    { n: number },
  ];
  return row.n;
}

/**
 * The most starts any window of 1.5 s held, by the database's clock (the one the limit is counted
 * against): for each start, the starts in the window that ends with it. (A lease deletes the holds of
 * windows that have passed, so this sees the recent windows.)
 */
async function busiestWindow(): Promise<number> {
  const [row] = (await f.db.sql`
    SELECT coalesce(max(n), 0)::int AS n FROM (
      SELECT (SELECT count(*) FROM weft.holds o
               WHERE o.gate = h.gate AND o.taken_at <= h.taken_at
                 AND o.taken_at > h.taken_at - interval '1500 milliseconds') AS n
        FROM weft.holds h WHERE h.gate = 'rate:default:mail') w`) as unknown as [{ n: number }];
  return row.n;
}

describe('rate limits', () => {
  it('ten dispatchers at once start no more than the limit per window, and the rest follow later', async () => {
    await Promise.all(
      Array.from({ length: RUNS }, () =>
        f.main.runs.start({ namespace: 'default', definition: 'mail', input: {} }),
      ),
    );
    // The first poll to get the key's lock takes the limit; polls a busy machine delays past the window
    // may take more, in the next window: the limit is checked per window, on the database's clock.
    const first = (await pollAll(f.engines, ['mail.send'], 10)).flat();
    expect(first.length).toBeGreaterThanOrEqual(LIMIT);
    expect(await busiestWindow()).toBe(LIMIT);
    // Finishing does not give a start back: the window does.
    await f.main.tasks.report({ namespace: 'default', worker: 'w', reports: first.map((t) => completed(t)) });
    const again = (await pollAll(f.engines, ['mail.send'], 10)).flat();
    expect(await busiestWindow()).toBeLessThanOrEqual(LIMIT);
    await f.main.tasks.report({ namespace: 'default', worker: 'w', reports: again.map((t) => completed(t)) });
    // A waiting poll is answered once the window has room: it wakes at the time the limit named (it
    // would otherwise wait out its 30 s and answer nothing).
    const next = await f.main.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['mail.send'],
      max: 10,
      waitMs: 30_000,
    });
    expect(next.length).toBeGreaterThan(0);
    expect(next.length).toBeLessThanOrEqual(LIMIT);
    expect(await busiestWindow()).toBeLessThanOrEqual(LIMIT);
    await f.main.tasks.report({ namespace: 'default', worker: 'w', reports: next.map((t) => completed(t)) });
  });

  it('every run gets through in the end', async () => {
    const done = await eventually(
      async () => {
        const got = (await pollAll(f.engines.slice(0, 3), ['mail.send'], 10)).flat();
        if (got.length > 0)
          await f.main.tasks.report({
            namespace: 'default',
            worker: 'w',
            reports: got.map((t) => completed(t)),
          });
        expect(await startsInWindow()).toBeLessThanOrEqual(LIMIT);
        expect(await busiestWindow()).toBeLessThanOrEqual(LIMIT);
        const [row] = (await f.db.sql`
          SELECT count(*)::int AS n FROM weft.runs WHERE status = 'completed'`) as unknown as [{ n: number }];
        return row.n === RUNS ? true : undefined;
      },
      45_000,
      'every run to complete',
    );
    expect(done).toBe(true);
  });
});
