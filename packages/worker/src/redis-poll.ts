import type { LeasedTask, TaskProtocolClient } from '@weft/client/tasks';
import type { RedisTaskSource, TaskMessage } from './redis-source.js';

/**
 * How often a worker of a Redis-dispatching server asks the server's own queue when it finds nothing
 * there; a Redis read in between blocks no longer than this.
 */
export const TABLE_POLL_MS = 1000;

/**
 * Takes tasks for a worker whose server dispatches through Redis. Most tasks are announced on Redis
 * streams: the worker reads a message and leases its task by id through the server, which leases only a
 * task still queued at that attempt, so a duplicate or stale message gets nothing. Messages are
 * acknowledged once the server has answered; if it did not, they stay pending and are read again later.
 *
 * Tasks under limits (semaphores, a rate limit, a capped task type) are never announced: only the server's
 * table queue counts limits, so they wait there. The worker asks the table for them as well, without
 * waiting, about every `TABLE_POLL_MS` while it finds none (its Redis reads block no longer than that) and
 * again at once when it found some, so a task under a limit starts within about a second of being admitted.
 */
export class RedisPoll {
  private tableAt = 0;

  constructor(
    private readonly client: TaskProtocolClient,
    private readonly source: RedisTaskSource,
    private readonly worker: string,
    private readonly types: readonly string[],
    private readonly waitMs: number,
  ) {}

  /** Up to `max` leased tasks (none when nothing came), and the heartbeat interval the server asks for. */
  async take(max: number, signal: AbortSignal): Promise<{ tasks: LeasedTask[]; heartbeatMs: number | null }> {
    if (Date.now() >= this.tableAt) {
      const answer = await this.client.poll(this.worker, this.types, max, 0, signal);
      if (answer.tasks.length > 0) return { tasks: answer.tasks, heartbeatMs: answer.heartbeat_ms };
      this.tableAt = Date.now() + TABLE_POLL_MS;
    }
    const messages: TaskMessage[] = await this.source.read(max, Math.min(this.waitMs, TABLE_POLL_MS));
    if (messages.length === 0) return { tasks: [], heartbeatMs: null };
    const named = messages.filter((m) => m.task_id !== '');
    const answer =
      named.length > 0
        ? await this.client.leaseById(
            this.worker,
            this.types,
            named.map((m) => ({ run_id: m.run_id, task_id: m.task_id, attempt: m.attempt })),
          )
        : null;
    await this.source.ack(messages);
    return { tasks: answer?.tasks ?? [], heartbeatMs: answer?.heartbeat_ms ?? null };
  }
}
