import type { Json } from '@weft/core';
import {
  Engine,
  type EngineConfig,
  type EngineOptions,
  type LeasedTask,
  type TaskReport,
} from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';

/** An engine on a fresh test database. */
export interface Harness {
  readonly db: TestDatabase;
  readonly store: PgStore;
  readonly engine: Engine;
  close(): Promise<void>;
}

/** Creates a test database and an engine on it (background loops running, fast polls). */
export async function harness(
  config: Partial<EngineConfig> = {},
  options: Omit<EngineOptions, 'store' | 'config'> = {},
): Promise<Harness> {
  const db = await createTestDatabase();
  const store = new PgStore(db.pool(10));
  const engine = new Engine({
    store,
    config: { decidePollMs: 50, timerPollMs: 50, leasePollMs: 100, relayPollMs: 100, ...config },
    ...options,
  });
  await engine.start();
  return {
    db,
    store,
    engine,
    async close() {
      await engine.stop();
      await db.drop();
    },
  };
}

/** Leases up to `max` tasks of the given types without waiting. */
export function lease(
  engine: Engine,
  types: string[],
  max = 10,
  worker = 'test-worker',
): Promise<LeasedTask[]> {
  return engine.tasks.poll({ namespace: 'default', worker, taskTypes: types, max, waitMs: 0 });
}

/** A completion report for a leased task. */
export function completed(task: LeasedTask, output: Json = null): TaskReport {
  return {
    runId: task.runId,
    taskId: task.id,
    attempt: task.attempt,
    leaseToken: task.leaseToken,
    outcome: { kind: 'completed', output },
  };
}

/** A failure report for a leased task. */
export function failed(task: LeasedTask, message: string, retryable = true): TaskReport {
  return {
    runId: task.runId,
    taskId: task.id,
    attempt: task.attempt,
    leaseToken: task.leaseToken,
    outcome: { kind: 'failed', error: { message, reason: 'error', retryable } },
  };
}

/**
 * Polls `check` until it returns a value (not undefined), or fails after `ms`. The bound is for what never
 * happens, not a measure of speed: wide enough for a loaded two-core machine running the whole suite.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  ms = 30_000,
  what = 'condition',
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Works every available task of the given types with `handler` until `done` says stop. */
export async function work(
  engine: Engine,
  types: string[],
  handler: (task: LeasedTask) => Json | Promise<Json>,
  done: () => Promise<boolean>,
  ms = 20_000,
): Promise<void> {
  const until = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > until) throw new Error('work() timed out');
    const tasks = await engine.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: types,
      max: 20,
      waitMs: 50,
    });
    if (tasks.length === 0) continue;
    const reports = await Promise.all(tasks.map(async (t) => completed(t, await handler(t))));
    await engine.tasks.report({ namespace: 'default', worker: 'w', reports });
  }
}
