import { isWeftError } from '@weft/core';
import { type DispatchTask, Engine, type QueueDispatcher, type Store, tableDispatcher } from '@weft/engine';
import { armFault, negotiateDispatch } from '@weft/engine/internal';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, ListDispatcher, type TestDatabase } from '@weft/testing';
import type { Sql } from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempBlobs } from '../fleet.js';
import { completed } from '../helpers.js';

// Transactional dispatch (invariants 7 and 17), negotiated between the store and the dispatcher: a dispatcher
// that joins the store's transaction commits its messages with the tasks; one that enqueues after commit has
// a window, and the engine repairs what a crash in it leaves behind.

const CHAIN = `
name: chain
nodes:
  - { id: a, task_type: td.work }
  - { id: b, task_type: td.work }
edges:
  - { from: a, to: b }
`;

let db: TestDatabase;
const engines: Engine[] = [];
const disarms: (() => void)[] = [];
const blobs = tempBlobs();

async function engine(dispatcher: ConstructorParameters<typeof Engine>[0]['dispatcher'], config = {}) {
  const e = new Engine({
    store: new PgStore(db.pool(3)),
    blobs,
    ...(dispatcher ? { dispatcher } : {}),
    config: { backgroundLoops: false, crossProcessWakeups: false, systemTasks: false, ...config },
  });
  await e.start();
  engines.push(e);
  return e;
}

/** A queue in a table of the same database: `enqueueIn` inserts through the store's transaction. */
class TableJobs implements QueueDispatcher {
  readonly kind = 'queue' as const;
  readonly name = 'table-jobs';
  constructor(private readonly sql: Sql) {}
  async enqueue(tasks: readonly DispatchTask[]): Promise<void> {
    await insertJobs(this.sql, tasks);
  }
  async enqueueIn(handle: unknown, tasks: readonly DispatchTask[]): Promise<void> {
    await insertJobs(handle as Sql, tasks);
  }
}

async function insertJobs(sql: Sql, tasks: readonly DispatchTask[]): Promise<void> {
  await sql`INSERT INTO test_jobs (task_id, attempt)
            SELECT * FROM unnest(${tasks.map((t) => t.taskId)}::uuid[], ${tasks.map((t) => t.attempt)}::int[])`;
}

beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql`CREATE TABLE test_jobs (task_id uuid NOT NULL, attempt int NOT NULL)`;
  const setup = await engine(undefined);
  await setup.definitions.deploy('default', CHAIN);
  await setup.definitions.deploy('repair', CHAIN);
});
afterEach(() => {
  for (const d of disarms.splice(0)) d();
});
afterAll(async () => {
  for (const e of engines) await e.stop();
  await db?.drop();
});

describe('negotiation', () => {
  it('settles on rows, in-transaction or after-commit dispatch, and refuses a pair it cannot repair', () => {
    const store = new PgStore(db.sql);
    expect(negotiateDispatch(store, tableDispatcher).kind).toBe('rows');
    expect(negotiateDispatch(store, new ListDispatcher()).kind).toBe('after_commit');
    expect(negotiateDispatch(store, new TableJobs(db.sql)).kind).toBe('in_transaction');
    // A store with neither capability: write-then-enqueue would have no repair.
    const bare = { transaction: store.transaction.bind(store) } as unknown as Store;
    let error: unknown = null;
    try {
      negotiateDispatch(bare, new ListDispatcher());
    } catch (e) {
      error = e;
    }
    expect(isWeftError(error, 'bad_config')).toBe(true);
    expect(String(error)).toContain('undispatchedTasks');
  });
});

describe('a dispatcher that joins the transaction', () => {
  it('commits each task with its job, and a rolled-back transaction leaves no job', async () => {
    const e = await engine(new TableJobs(db.sql));
    const run = await e.runs.start({ namespace: 'default', definition: 'chain', input: {} });
    const jobs = () => db.sql<{ taskId: string; attempt: number }[]>`SELECT task_id, attempt FROM test_jobs`;
    const [a] = await e.context.store.listTasks(run.id);
    expect(await jobs()).toEqual([{ taskId: a!.id, attempt: 1 }]);
    disarms.push(
      armFault('pass.after-write', () => {
        throw new Error('rolled back after the writes');
      }),
    );
    await expect(e.runs.start({ namespace: 'default', definition: 'chain', input: {} })).rejects.toThrow(
      'rolled back',
    );
    expect(await jobs()).toHaveLength(1);
  });
});

describe('write-then-enqueue', () => {
  it('a redelivered message for a finished step re-drives its run (a crash lost its successor)', async () => {
    const list = new ListDispatcher();
    // The background repair is far off: only the redelivery can bring b back.
    const e = await engine(list, { redispatchAfterMs: 600_000 });
    const run = await e.runs.start({ namespace: 'default', definition: 'chain', input: {} });
    const [message] = list.takeDue();
    const [a] = await e.tasks.leaseById({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['td.work'],
      tasks: [message!],
    });
    disarms.push(
      armFault('dispatch.after-commit', () => {
        throw new Error('crashed after commit, before enqueue');
      }),
    );
    // (The process would die here; in the test the report's caller just sees an error, or none.)
    await e.tasks
      .report({ namespace: 'default', worker: 'w', reports: [completed(a!, 'a')] })
      .catch(() => {});
    for (const d of disarms.splice(0)) d();
    // a completed and b is queued, with no message behind it.
    const b = (await e.context.store.listTasks(run.id)).find((t) => t.nodeId === 'b')!;
    expect(b.status).toBe('queued');
    expect(list.messages).toEqual([]);
    // The queue delivers a's message again (its consumer crashed before acknowledging it).
    expect(
      await e.tasks.leaseById({
        namespace: 'default',
        worker: 'w',
        taskTypes: ['td.work'],
        tasks: [message!],
      }),
    ).toEqual([]);
    expect(list.messages.map((m) => m.taskId)).toEqual([b.id]);
    const [leased] = await e.tasks.leaseById({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['td.work'],
      tasks: list.takeDue(),
    });
    await e.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(leased!, 'b')] });
    expect((await e.runs.get(run.id)).status).toBe('completed');
  });

  it('the repair round sends queued tasks left without a message, and only those', async () => {
    const list = new ListDispatcher();
    const e = await engine(list, { redispatchAfterMs: 0 });
    disarms.push(
      armFault('dispatch.after-commit', () => {
        throw new Error('crashed after commit, before enqueue');
      }),
    );
    await expect(e.runs.start({ namespace: 'repair', definition: 'chain', input: {} })).rejects.toThrow(
      'crashed',
    );
    for (const d of disarms.splice(0)) d();
    expect(list.messages).toEqual([]);
    // (Earlier tests of this file left queued tasks of namespace default: they are sent too.)
    const ours = () => list.takeDue().filter((m) => m.namespace === 'repair');
    await e.redispatcher.round();
    const sent = ours();
    expect(sent).toHaveLength(1);
    const [leased] = await e.tasks.leaseById({
      namespace: 'repair',
      worker: 'w',
      taskTypes: ['td.work'],
      tasks: sent,
    });
    expect(leased?.nodeId).toBe('a');
    // Leased now: the next round sends nothing for it.
    await e.redispatcher.round();
    expect(ours()).toEqual([]);
  });
});
