import { randomBytes } from 'node:crypto';
import { redisTaskDestination, taskStream } from '@weft/connectors';
import {
  type Engine,
  type LeasedTask,
  outboxDispatcher,
  type StepHandler,
  TASKS_DESTINATION,
} from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, serviceUrl } from '@weft/testing';
import { type DispatcherFixture, dispatcherConformance } from '@weft/testing/conformance';
import { Redis } from 'ioredis';
import { describe } from 'vitest';
import { RedisTaskSource, TASK_GROUP, type TaskMessage } from '../src/redis-source.js';

// Weft's Redis dispatcher against the dispatcher conformance suite: queued tasks become outbox rows in
// their transaction, the relay adds them to Redis streams, and the consumer reads them the way a worker of
// a Redis-dispatching server does (RedisTaskSource, a consumer group per namespace), leases each named
// attempt by id through the engine, acknowledges, then runs and reports with the fencing token.

const redisUrl = await serviceUrl('redis');

/** The task types the suite's workflows use: their streams are the ones `pending` counts. */
const TYPES = ['conformance.step', 'conformance.flaky', 'conformance.once'];

function redisFixture(url: string) {
  return async (): Promise<DispatcherFixture> => {
    const db = await createTestDatabase();
    // Streams of their own per test: nothing left over from another test is read or counted.
    const prefix = `weft-conformance-${randomBytes(4).toString('hex')}`;
    const redis = new Redis(url, { maxRetriesPerRequest: 3 });
    const streams = TYPES.map((t) => taskStream(prefix, 'default', t));
    return {
      store: new PgStore(db.pool(10)),
      dispatcher: outboxDispatcher('redis'),
      destinations: [redisTaskDestination({ url, prefix, reannounceMs: 5_000 })],
      consume: (engine, taskTypes, handler) => consumeStreams(engine, url, prefix, taskTypes, handler),
      async pending() {
        // Outbox rows still announcing a queued task (kept until it is leased), and stream entries no worker
        // of the group has read yet.
        const [row] = await db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM weft.outbox WHERE destination = ${TASKS_DESTINATION}`;
        let unread = 0;
        for (const stream of streams) unread += await unreadEntries(redis, stream);
        return row!.n + unread;
      },
      async duplicate(task) {
        // The same fields the relay writes: what a re-announcement or a replayed stream delivers again.
        await redis.xadd(
          taskStream(prefix, task.namespace, task.taskType),
          '*',
          'id',
          `task:${task.taskId}:${task.attempt}`,
          'task_id',
          task.taskId,
          'run_id',
          task.runId,
          'attempt',
          String(task.attempt),
        );
      },
      async close() {
        const keys = await redis.keys(`${prefix}:*`);
        if (keys.length > 0) await redis.del(...keys);
        await redis.quit();
        await db.drop();
      },
    };
  };
}

/** Entries of a stream the worker group has not read yet (all of them before the group exists). */
async function unreadEntries(redis: Redis, stream: string): Promise<number> {
  const length = await redis.xlen(stream);
  if (length === 0) return 0;
  const groups = (await redis.xinfo('GROUPS', stream)) as unknown[][];
  for (const g of groups) {
    const info = new Map<string, unknown>();
    for (let i = 0; i + 1 < g.length; i += 2) info.set(String(g[i]), g[i + 1]);
    if (info.get('name') === TASK_GROUP) return Number(info.get('lag') ?? length);
  }
  return length;
}

/**
 * A Redis worker's loop, with the engine in place of the server: read messages in the group, lease the
 * named attempts by id, acknowledge once the lease has answered, run the leased steps and report them.
 * Steps run while the loop reads on, so a duplicate arriving during a step is read and leased (for nothing).
 */
function consumeStreams(
  engine: Engine,
  url: string,
  prefix: string,
  taskTypes: readonly string[],
  handler: StepHandler,
): () => Promise<void> {
  const worker = `redis-${randomBytes(3).toString('hex')}`;
  const source = new RedisTaskSource(url, prefix, 'default', taskTypes, worker, 2_000);
  const running = new Set<Promise<void>>();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const messages: TaskMessage[] = await source.read(10, 100);
      const named = messages.filter((m) => m.task_id !== '');
      const leased =
        named.length > 0
          ? await engine.tasks.leaseById({
              namespace: 'default',
              worker,
              taskTypes,
              tasks: named.map((m) => ({ runId: m.run_id, taskId: m.task_id, attempt: m.attempt })),
            })
          : [];
      await source.ack(messages);
      for (const task of leased) {
        const p = runLeased(engine, worker, task, handler).finally(() => running.delete(p));
        running.add(p);
      }
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    await Promise.all(running);
    source.close();
  };
}

async function runLeased(engine: Engine, worker: string, task: LeasedTask, handler: StepHandler) {
  const base = { runId: task.runId, taskId: task.id, attempt: task.attempt, leaseToken: task.leaseToken };
  let report: Parameters<Engine['tasks']['report']>[0]['reports'][number];
  try {
    report = { ...base, outcome: { kind: 'completed', output: await handler(task) } };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    report = { ...base, outcome: { kind: 'failed', error: { reason: 'error', retryable: true, message } } };
  }
  await engine.tasks.report({ namespace: 'default', worker, reports: [report] });
}

// Without Redis the suite is skipped; serviceUrl has printed that Redis is missing and where it looked.
describe.skipIf(!redisUrl)('Redis dispatcher', () => {
  dispatcherConformance('redis (outbox relayed to streams)', redisFixture(redisUrl ?? ''));
});
