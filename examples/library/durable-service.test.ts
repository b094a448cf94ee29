// The durable service on PostgreSQL: stopped in the middle of a run, a new engine on the same database
// finishes it, without running the steps that were done again.
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signup, startService } from './durable-service.mjs';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

// Short leases, so that the task the stopped engine held is given to the new one within a second.
const config = { leaseMs: 800, heartbeatMs: 200, leasePollMs: 100, timerPollMs: 50, decidePollMs: 50 };

describe('a durable embedded service', () => {
  it('finishes a run on a new engine after the first one stopped mid-run', async () => {
    let accounts = 0;
    let reachedWelcome: () => void = () => {};
    const atWelcome = new Promise<void>((resolve) => (reachedWelcome = resolve));
    const first = await startService({
      databaseUrl: db.url,
      config,
      handlers: {
        'accounts.create': async ({ email }: { email: string }) => {
          accounts++;
          return { id: `acct-${email}` };
        },
        // The first engine stops while it holds the welcome mail: the handler never finishes.
        'mail.welcome': () => {
          reachedWelcome();
          return new Promise(() => {});
        },
      },
    });
    const run = await first.engine.start(signup, { email: 'ada@example.com' });
    await atWelcome;
    await first.stop();

    const second = await startService({
      databaseUrl: db.url,
      config,
      handlers: {
        'accounts.create': async () => {
          accounts++;
          return { id: 'again' };
        },
      },
    });
    try {
      await expect(second.engine.result(run.id)).resolves.toEqual({
        account: 'acct-ada@example.com',
        mail: 'msg-ada@example.com',
      });
      expect(accounts).toBe(1);
      const history = await second.engine.engine.context.store.readHistory(run.id, 0, 200);
      // The welcome mail was leased by the first engine, its lease ran out, and the second one sent it.
      expect(history.filter((h) => h.type === 'task.failed' && h.nodeId === 'welcome')).toHaveLength(1);
    } finally {
      await second.stop();
    }
  });
});
