import { Engine, type EngineConfig, type LeasedTask } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { completed } from '../helpers.js';

/** Several engines on one test database, each with connections of its own: real concurrent replicas. */
export interface Cluster {
  readonly db: TestDatabase;
  readonly engines: Engine[];
  close(): Promise<void>;
}

/** Starts `size` engines on a fresh database, all running background loops (decider, timers, leases). */
export async function cluster(size: number, config: Partial<EngineConfig> = {}): Promise<Cluster> {
  const db = await createTestDatabase();
  const engines: Engine[] = [];
  for (let i = 0; i < size; i++) {
    const engine = new Engine({
      store: new PgStore(db.pool(4)),
      config: { decidePollMs: 20, timerPollMs: 20, leasePollMs: 200, ...config },
    });
    await engine.start();
    engines.push(engine);
  }
  return {
    db,
    engines,
    async close() {
      for (const e of engines) await e.stop();
      await db.drop();
    },
  };
}

/** Leases up to `max` tasks of the given types on one engine, without waiting. */
export function take(engine: Engine, types: string[], max = 50, waitMs = 0): Promise<LeasedTask[]> {
  return engine.tasks.poll({ namespace: 'default', worker: 'w', taskTypes: types, max, waitMs });
}

/** Reports tasks completed through one engine. */
export async function finish(
  engine: Engine,
  tasks: readonly LeasedTask[],
  output: (t: LeasedTask) => unknown = () => null,
) {
  if (tasks.length === 0) return;
  await engine.tasks.report({
    namespace: 'default',
    worker: 'w',
    reports: tasks.map((t) => completed(t, output(t) as never)),
  });
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));
