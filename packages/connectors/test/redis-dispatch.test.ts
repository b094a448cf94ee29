import { randomBytes } from 'node:crypto';
import { redisTaskDestination, taskStream } from '@weft/connectors';
import { deliverBatch, outboxDispatcher, TASKS_DESTINATION } from '@weft/engine';
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
});

function pairs(fields: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) out.push([fields[i]!, fields[i + 1]!]);
  return out;
}
