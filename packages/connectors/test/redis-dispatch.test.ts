import { randomBytes } from 'node:crypto';
import { redisTaskDestination, taskStream } from '@weft/connectors';
import { outboxDispatcher, TASKS_DESTINATION } from '@weft/engine';
import { deliverBatch } from '@weft/engine/internal';
import { serviceUrl } from '@weft/testing';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { completed, type Harness, harness } from '../../postgres/test/helpers.js';

// The Redis dispatcher: a queued task becomes an outbox row in the task's transaction, and the relay
// carries it to the task type's stream. Leases stay in PostgreSQL: a message only says "look at task T".

const redisUrl = await serviceUrl('redis');
const prefix = `weft-test-${randomBytes(4).toString('hex')}`;

describe.skipIf(!redisUrl)('Redis dispatcher', () => {
  let h: Harness;
  const redis = redisUrl ? new Redis(redisUrl) : null;

  afterAll(async () => {
    const keys = (await redis?.keys(`${prefix}:*`)) ?? [];
    if (keys.length > 0) await redis?.del(...keys);
    await redis?.quit();
    await h?.close();
  });

  it('announces queued tasks through the outbox, again if Redis lost them, and stops once leased', async () => {
    const destination = redisTaskDestination({ url: redisUrl!, prefix, reannounceMs: 100 });
    h = await harness(
      { backgroundLoops: false, systemTasks: false },
      { dispatcher: outboxDispatcher('redis'), destinations: [destination] },
    );
    await h.engine.definitions.deploy('default', 'name: rd\nnodes:\n  - { id: a, task_type: rd.work }\n');
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'rd', input: {} });
    // Nothing on the queue table: the task waits in the outbox, written with it.
    expect(await h.db.sql`SELECT 1 FROM weft.queue`).toEqual([]);
    const stream = taskStream(prefix, 'default', 'rd.work');
    await deliverBatch(h.engine.context, TASKS_DESTINATION);
    const [first] = await redis!.xrange(stream, '-', '+');
    const fields = Object.fromEntries(pairs(first![1]));
    expect(fields).toMatchObject({ run_id: run.id, attempt: '1' });
    // Redis loses the stream. The row is still there, and the task is still queued: it is sent again.
    await redis!.del(stream);
    await new Promise((r) => setTimeout(r, 150));
    await deliverBatch(h.engine.context, TASKS_DESTINATION);
    expect(await redis!.xlen(stream)).toBe(1);
    // A worker leases it by id; a second lease of the same message gets nothing.
    const ask = { runId: run.id, taskId: fields.task_id!, attempt: 1 };
    const [leased] = await h.engine.tasks.leaseById({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['rd.work'],
      tasks: [ask],
    });
    expect(leased).toMatchObject({ id: fields.task_id, attempt: 1 });
    expect(
      await h.engine.tasks.leaseById({
        namespace: 'default',
        worker: 'w2',
        taskTypes: ['rd.work'],
        tasks: [ask],
      }),
    ).toEqual([]);
    // The lease took the row out of the outbox: no more announcements.
    expect(await h.db.sql`SELECT 1 FROM weft.outbox WHERE destination = ${TASKS_DESTINATION}`).toEqual([]);
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(leased!, 1)] });
    expect((await h.engine.runs.get(run.id)).status).toBe('completed');
  });

  it('leases only in the namespace that asks', async () => {
    await h.engine.definitions.deploy('other', 'name: rd\nnodes:\n  - { id: a, task_type: rd.work }\n');
    const run = await h.engine.runs.start({ namespace: 'other', definition: 'rd', input: {} });
    const [task] = await h.db.sql<{ id: string }[]>`SELECT id FROM weft.tasks WHERE run_id = ${run.id}::uuid`;
    const ask = { runId: run.id, taskId: task!.id, attempt: 1 };
    const wrong = await h.engine.tasks.leaseById({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['rd.work'],
      tasks: [ask],
    });
    expect(wrong).toEqual([]);
    const right = await h.engine.tasks.leaseById({
      namespace: 'other',
      worker: 'w',
      taskTypes: ['rd.work'],
      tasks: [ask],
    });
    expect(right).toHaveLength(1);
  });

  it('keeps tasks under limits on the table queue: only its gated lease path counts limits', async () => {
    await h.engine.definitions.deploy(
      'default',
      `name: lim
limits:
  concurrency: { rd.capped: 1 }
  semaphores: { rd-db: 1 }
  rates: { rd-mail: { limit: 5, per: 1m } }
nodes:
  - { id: free, task_type: rd.free }
  - { id: sem, task_type: rd.sem, semaphores: [rd-db] }
  - { id: rate, task_type: rd.rate, rate_limit: rd-mail }
  - { id: capped, task_type: rd.capped }
`,
    );
    const runs = await Promise.all(
      [1, 2].map(() => h.engine.runs.start({ namespace: 'default', definition: 'lim', input: {} })),
    );
    const ids = runs.map((r) => r.id);
    const queued = await h.db.sql<{ taskType: string; gates: unknown }[]>`
      SELECT task_type, gates FROM weft.queue WHERE run_id = ANY(${ids}::uuid[]) ORDER BY task_type`;
    expect(queued.map((q) => q.taskType)).toEqual([
      'rd.capped',
      'rd.capped',
      'rd.rate',
      'rd.rate',
      'rd.sem',
      'rd.sem',
    ]);
    const messages = await h.db.sql<{ kind: string; type: string }[]>`
      SELECT kind, payload->>'taskType' AS type FROM weft.outbox
       WHERE run_id = ANY(${ids}::uuid[]) AND destination = ${TASKS_DESTINATION}`;
    expect(messages.map((m) => m.type)).toEqual(['rd.free', 'rd.free']);
    // A lease by id never takes them, even when a (forged) message names them: their gates are on the
    // queue row, which only the gated path reads.
    const named = await h.db.sql<{ runId: string; taskId: string; attempt: number }[]>`
      SELECT run_id, task_id, 1 AS attempt FROM weft.queue WHERE run_id = ANY(${ids}::uuid[])`;
    expect(
      await h.engine.tasks.leaseById({
        namespace: 'default',
        worker: 'w',
        taskTypes: ['rd.sem', 'rd.capped', 'rd.rate'],
        tasks: named,
      }),
    ).toEqual([]);
    const [onQueue] = await h.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM weft.queue WHERE run_id = ANY(${ids}::uuid[])`;
    expect(onQueue!.n).toBe(6);
    // The table's gated path leases them within their limits: one permit, one capped slot.
    const got = await h.engine.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['rd.sem', 'rd.capped', 'rd.rate'],
      max: 10,
      waitMs: 0,
    });
    expect(got.map((t) => t.taskType).sort()).toEqual(['rd.capped', 'rd.rate', 'rd.rate', 'rd.sem']);
  });

  it('a task announced before its type was capped is moved to the table queue and leased under the cap', async () => {
    await h.engine.definitions.deploy('default', 'name: late\nnodes:\n  - { id: a, task_type: rd.late }\n');
    const runs = await Promise.all(
      [1, 2, 3].map(() => h.engine.runs.start({ namespace: 'default', definition: 'late', input: {} })),
    );
    const ids = runs.map((r) => r.id);
    const announced = await h.db.sql<{ runId: string; taskId: string; attempt: number }[]>`
      SELECT run_id, task_id, (payload->>'attempt')::int AS attempt FROM weft.outbox
       WHERE run_id = ANY(${ids}::uuid[]) AND destination = ${TASKS_DESTINATION}`;
    expect(announced).toHaveLength(3);
    // The cap comes after the messages: a lease by id must not take the tasks past it.
    await h.engine.limits.set({
      namespace: 'default',
      kind: 'concurrency',
      name: 'rd.late',
      max: 1,
      windowMs: null,
    });
    const leased = await h.engine.tasks.leaseById({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['rd.late'],
      tasks: announced,
    });
    expect(leased).toEqual([]);
    // They are on the table queue now, once each, and their messages are gone.
    const [moved] = await h.db.sql<{ n: number; tasks: number }[]>`
      SELECT count(*)::int AS n, count(DISTINCT task_id)::int AS tasks FROM weft.queue
       WHERE run_id = ANY(${ids}::uuid[])`;
    expect(moved).toEqual({ n: 3, tasks: 3 });
    expect(
      await h.db
        .sql`SELECT 1 FROM weft.outbox WHERE run_id = ANY(${ids}::uuid[]) AND destination = ${TASKS_DESTINATION}`,
    ).toEqual([]);
    // A second lease by id of the same (stale) messages moves nothing twice.
    await h.engine.tasks.leaseById({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['rd.late'],
      tasks: announced,
    });
    const [again] = await h.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM weft.queue WHERE run_id = ANY(${ids}::uuid[])`;
    expect(again!.n).toBe(3);
    const first = await h.engine.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['rd.late'],
      max: 3,
      waitMs: 0,
    });
    expect(first).toHaveLength(1);
    expect(
      await h.engine.tasks.poll({
        namespace: 'default',
        worker: 'w',
        taskTypes: ['rd.late'],
        max: 3,
        waitMs: 0,
      }),
    ).toEqual([]);
    await h.engine.tasks.report({ namespace: 'default', worker: 'w', reports: [completed(first[0]!, 1)] });
    const second = await h.engine.tasks.poll({
      namespace: 'default',
      worker: 'w',
      taskTypes: ['rd.late'],
      max: 3,
      waitMs: 0,
    });
    expect(second).toHaveLength(1);
  });
});

function pairs(fields: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) out.push([fields[i]!, fields[i + 1]!]);
  return out;
}
