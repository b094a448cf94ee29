import type { LeasedTask } from '@weft/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, fleet, pollAll } from '../fleet.js';
import { completed } from '../helpers.js';

// Invariant 18: a concurrency cap per task type holds when ten dispatchers on ten connections lease at the
// same instant. Each counts the running tasks of the type under the type's transaction-scoped advisory lock,
// with a statement that starts after the lock is held; without the lock, each of them reads the same count
// and grants itself the whole cap.

const CAP = 5;
let f: Fleet;
beforeAll(async () => {
  f = await fleet(10);
  await f.main.definitions.deploy(
    'default',
    `name: capped
limits:
  concurrency: { cap.work: ${CAP} }
nodes:
  - { id: a, task_type: cap.work }
`,
  );
});
afterAll(async () => {
  await f?.close();
});

async function runningOfType(type: string): Promise<number> {
  const [row] = (await f.db.sql`
    SELECT count(*)::int AS n FROM weft.tasks WHERE task_type = ${type} AND status = 'running'`) as unknown as [
    { n: number },
  ];
  return row.n;
}

describe('concurrency cap per task type', () => {
  it('ten dispatchers leasing at once never hold more than the cap', async () => {
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        f.main.runs.start({ namespace: 'default', definition: 'capped', input: { i } }),
      ),
    );
    let held: LeasedTask[] = [];
    let done = 0;
    for (let round = 0; round < 12 && done < 40; round++) {
      const got = (await pollAll(f.engines, ['cap.work'], 10)).flat();
      held.push(...got);
      expect(held.length).toBeLessThanOrEqual(CAP);
      expect(await runningOfType('cap.work')).toBeLessThanOrEqual(CAP);
      // Finish two, so the next round has room for two more.
      const finishing = held.slice(0, 2);
      held = held.slice(2);
      if (finishing.length > 0)
        await f.main.tasks.report({
          namespace: 'default',
          worker: 'w',
          reports: finishing.map((t) => completed(t)),
        });
      done += finishing.length;
    }
    expect(done).toBeGreaterThan(10);
  });

  it('a type without a cap takes no part in it', async () => {
    await f.main.definitions.deploy('default', 'name: free\nnodes:\n  - { id: a, task_type: free.work }\n');
    await Promise.all(
      Array.from({ length: 30 }, () =>
        f.main.runs.start({ namespace: 'default', definition: 'free', input: {} }),
      ),
    );
    const got = (await pollAll(f.engines, ['free.work'], 10)).flat();
    expect(got).toHaveLength(30);
  });

  it('a cap set by API applies to the next lease, and lifting it frees the queue', async () => {
    await f.main.definitions.deploy('default', 'name: later\nnodes:\n  - { id: a, task_type: later.work }\n');
    await f.main.limits.set({
      namespace: 'default',
      kind: 'concurrency',
      name: 'later.work',
      max: 2,
      windowMs: null,
    });
    await Promise.all(
      Array.from({ length: 6 }, () =>
        f.main.runs.start({ namespace: 'default', definition: 'later', input: {} }),
      ),
    );
    expect((await pollAll(f.engines, ['later.work'], 10)).flat()).toHaveLength(2);
    await f.main.limits.delete('default', 'concurrency', 'later.work');
    expect((await pollAll(f.engines, ['later.work'], 10)).flat()).toHaveLength(4);
  });
});
