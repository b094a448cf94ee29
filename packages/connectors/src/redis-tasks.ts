import { type Delivery, type Destination, TASKS_DESTINATION } from '@weft/engine';
import type { Redis } from 'ioredis';
import { errorText } from './message.js';
import { redisClient } from './redis-sink.js';

/** Where task messages go: one stream per namespace and task type, `<prefix>:<namespace>:<task type>`. */
export const DEFAULT_TASK_STREAM_PREFIX = 'weft:tasks';

/** The stream of one task type. Workers read the same name (the server tells them the prefix). */
export function taskStream(prefix: string, namespace: string, taskType: string): string {
  return `${prefix}:${namespace}:${taskType}`;
}

/**
 * The Redis half of the Redis dispatcher: the relay's destination for task messages. Each message (XADD)
 * names a task and its attempt; a worker reading it leases that task through the server, where leases and
 * fencing live, so a duplicate or stale message leases nothing.
 */
export function redisTaskDestination(options: {
  readonly url: string;
  readonly prefix?: string;
  readonly maxLen?: number;
  /** Announce a task again after this long if it is still queued, in case Redis lost the message. */
  readonly reannounceMs?: number;
}): Destination {
  const prefix = options.prefix ?? DEFAULT_TASK_STREAM_PREFIX;
  const again: Delivery = { kind: 'repeat', afterMs: options.reannounceMs ?? 60_000 };
  let client: Redis | null = null;
  return {
    name: TASKS_DESTINATION,
    timeoutMs: 15_000,
    async deliver(rows, { tx }) {
      // A message is worth sending only while its task is queued; for a task leased, cancelled or moved
      // on, the row is done. While it stays queued the message is sent again now and then: Redis may lose
      // a message (a failover, a restart without persistence), and a task must not wait for one forever.
      const keys = rows.flatMap((r) =>
        r.payload.kind === 'task_message'
          ? [{ runId: r.payload.runId, taskId: r.payload.taskId, attempt: r.payload.attempt }]
          : [],
      );
      const queued = new Set((await tx.queuedTasks(keys)).map((k) => `${k.taskId}/${k.attempt}`));
      const out: Delivery[] = rows.map(() => again);
      try {
        if (!client) client = redisClient(options.url);
        if (client.status === 'wait') await client.connect();
        const pipeline = client.pipeline();
        const sent: number[] = [];
        rows.forEach((row, i) => {
          const p = row.payload;
          if (p.kind !== 'task_message') {
            out[i] = {
              kind: 'failed',
              error: `the task queue cannot deliver a ${p.kind} row`,
              permanent: true,
            };
            return;
          }
          if (!queued.has(`${p.taskId}/${p.attempt}`)) {
            out[i] = { kind: 'delivered' };
            return;
          }
          sent.push(i);
          pipeline.xadd(
            taskStream(prefix, p.namespace, p.taskType),
            'MAXLEN',
            '~',
            options.maxLen ?? 100_000,
            '*',
            'id',
            row.messageId,
            'task_id',
            p.taskId,
            'run_id',
            p.runId,
            'attempt',
            String(p.attempt),
          );
        });
        if (sent.length === 0) return out;
        const results = (await pipeline.exec()) ?? [];
        sent.forEach((i, k) => {
          const error = results[k]?.[0];
          if (error || !results[k])
            out[i] = { kind: 'failed', error: `redis: ${errorText(error ?? 'no reply')}` };
        });
      } catch (error) {
        return rows.map(() => ({ kind: 'failed', error: `redis: ${errorText(error)}` }));
      }
      return out;
    },
    async close() {
      client?.disconnect();
      client = null;
    },
  };
}
