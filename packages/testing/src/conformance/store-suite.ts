import type { Store } from '@weft/engine';
import { afterAll, beforeAll, describe } from 'vitest';
import { claimTests } from './store-claim.js';
import { decisionTests } from './store-decisions.js';
import { definitionTests } from './store-definitions.js';
import type { Fixture, StoreFactory, StoreUnderTest } from './store-fixtures.js';
import { limitTests } from './store-limits.js';
import { operatorReadTests } from './store-operator-reads.js';
import { outboxTests } from './store-outbox.js';
import { runTests } from './store-runs.js';
import { scheduleTests } from './store-schedules.js';
import { taskTests } from './store-tasks.js';

/**
 * Registers the behaviour every Weft store must have as vitest tests, under `describe(name)`: definitions,
 * runs and idempotency keys, the claim contract (one winner of concurrent claims, fencing), report
 * verdicts, lease expiry, the decide queue and inbox, timers, history, rollback, the outbox, limits,
 * human tasks, schedules, and what operators read (runs by id prefix, key and
 * start time, counts, workers seen, namespaces). `makeStore` is called once for the suite; tests use namespaces of their
 * own, so they share the store without seeing each other.
 *
 * ```ts
 * import { storeConformance } from '@weft/testing/conformance';
 * storeConformance('my store', async () => ({ store: new MyStore(), close: async () => {} }));
 * ```
 */
export function storeConformance(name: string, makeStore: StoreFactory): void {
  describe(`store conformance: ${name}`, () => {
    let underTest: StoreUnderTest | null = null;
    const handles: Store[] = [];
    const fixture: Fixture = {
      get store(): Store {
        if (!underTest) throw new Error('the store is not ready: its factory failed or has not run');
        return underTest.store;
      },
      // Handles are made once and shared by the tests, so a database store opens a bounded number of pools.
      async peers(n: number): Promise<Store[]> {
        const u = underTest!;
        while (handles.length < n) handles.push(u.connect ? await u.connect() : u.store);
        return handles.slice(0, n);
      },
    };
    beforeAll(async () => {
      underTest = await makeStore();
    });
    afterAll(async () => {
      await underTest?.close();
    });
    const get = () => fixture;
    definitionTests(get);
    runTests(get);
    claimTests(get);
    taskTests(get);
    decisionTests(get);
    outboxTests(get);
    limitTests(get);
    scheduleTests(get);
    operatorReadTests(get);
  });
}
