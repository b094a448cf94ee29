import { type Engine, type LeasedTask, type StepHandler, tableDispatcher } from '@weft/engine';
import { MemoryStore } from '@weft/memory';
import { PgStore } from '@weft/postgres';
import { createTestDatabase } from '../database.js';
import { ListDispatcher } from '../list-dispatcher.js';
import { duplicateQueueRow } from './dispatcher-conformance.js';
import type { DispatcherFixture } from './dispatcher-fixture.js';

/** Weft's default dispatcher, the table queue, on a fresh test database: workers poll the engine. */
export async function tableDispatcherFixture(): Promise<DispatcherFixture> {
  const db = await createTestDatabase();
  const store = new PgStore(db.pool(10));
  return {
    store,
    dispatcher: tableDispatcher,
    consume: (engine, taskTypes, handler) => pollLoop(engine, taskTypes, handler),
    async pending() {
      const [row] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM weft.queue`;
      return row!.n;
    },
    duplicate: (task) => duplicateQueueRow(store, task),
    close: () => db.drop(),
  };
}

/** The list dispatcher (a queue in this process that enqueues after commit) on a fresh test database. */
export async function listDispatcherFixture(): Promise<DispatcherFixture> {
  const db = await createTestDatabase();
  const dispatcher = new ListDispatcher();
  return {
    store: new PgStore(db.pool(10)),
    dispatcher,
    consume: (engine, taskTypes, handler) => dispatcher.consume(engine, taskTypes, handler),
    pending: async () => dispatcher.messages.length,
    duplicate: (task) => dispatcher.enqueue([task]),
    close: () => db.drop(),
  };
}

/** The table queue on a MemoryStore: the engine's own rows, kept and rolled back with its transactions. */
export async function memoryTableDispatcherFixture(): Promise<DispatcherFixture> {
  const store = new MemoryStore();
  return {
    store,
    dispatcher: tableDispatcher,
    consume: (engine, taskTypes, handler) => pollLoop(engine, taskTypes, handler),
    pending: () => store.queueDepth(),
    duplicate: (task) => duplicateQueueRow(store, task),
    close: () => store.close(),
  };
}

/**
 * The list dispatcher on a MemoryStore: enqueue after commit, repaired through the store's
 * `undispatchedTasks`.
 */
export async function memoryListDispatcherFixture(): Promise<DispatcherFixture> {
  return memoryList(new ListDispatcher());
}

/** The list dispatcher joining MemoryStore's transactions: its messages commit with their tasks. */
export async function memoryJoinedListDispatcherFixture(): Promise<DispatcherFixture> {
  return memoryList(new ListDispatcher({ joinTransactions: true }));
}

function memoryList(dispatcher: ListDispatcher): DispatcherFixture {
  const store = new MemoryStore();
  return {
    store,
    dispatcher,
    consume: (engine, taskTypes, handler) => dispatcher.consume(engine, taskTypes, handler),
    pending: async () => dispatcher.messages.length,
    duplicate: (task) => dispatcher.enqueue([task]),
    close: () => store.close(),
  };
}

/** A worker polling the engine's table queue, running each task with `handler` and reporting it. */
export function pollLoop(
  engine: Engine,
  taskTypes: readonly string[],
  handler: StepHandler,
): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const tasks = await engine.tasks.poll({
        namespace: 'default',
        worker: 'poller',
        taskTypes,
        max: 10,
        waitMs: 100,
      });
      await Promise.all(tasks.map((t) => runOne(engine, t, handler)));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

async function runOne(engine: Engine, task: LeasedTask, handler: StepHandler): Promise<void> {
  const base = { runId: task.runId, taskId: task.id, attempt: task.attempt, leaseToken: task.leaseToken };
  let report: Parameters<Engine['tasks']['report']>[0]['reports'][number];
  try {
    report = { ...base, outcome: { kind: 'completed', output: await handler(task) } };
  } catch (e) {
    report = {
      ...base,
      outcome: { kind: 'failed', error: { reason: 'error', retryable: true, message: String(e) } },
    };
  }
  await engine.tasks.report({ namespace: 'default', worker: 'poller', reports: [report] });
}
