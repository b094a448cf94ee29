import type { Redis } from 'ioredis';

/** A task message read from a Redis stream: which task and attempt to lease, and where it came from. */
export interface TaskMessage {
  readonly stream: string;
  readonly entry: string;
  readonly run_id: string;
  readonly task_id: string;
  readonly attempt: number;
}

/** The consumer group every worker of a namespace reads task streams in. */
export const TASK_GROUP = 'weft-workers';

/**
 * Reads task messages from the server's Redis streams (one per task type), in a consumer group so that
 * each message goes to one worker. A message is only a wake-up: the worker leases the task through the
 * server, and acknowledges the message once the server has answered. Messages a worker read but never
 * acknowledged (it died) are claimed by another worker after `staleMs`.
 */
export class RedisTaskSource {
  private blocking: Redis | null = null;
  private commands: Redis | null = null;
  private readonly streams: string[];
  private ready: Promise<void> | null = null;
  private nextClaim = 0;

  constructor(
    private readonly url: string,
    prefix: string,
    namespace: string,
    taskTypes: readonly string[],
    private readonly consumer: string,
    private readonly staleMs = 30_000,
  ) {
    this.streams = taskTypes.map((t) => `${prefix}:${namespace}:${t}`);
  }

  /** Up to `max` messages: stale ones first when it is time to look, else new ones (waiting up to `blockMs`). */
  async read(max: number, blockMs: number): Promise<TaskMessage[]> {
    await this.open();
    if (Date.now() >= this.nextClaim) {
      this.nextClaim = Date.now() + this.staleMs / 2;
      const stale = await this.claimStale(max);
      if (stale.length > 0) return stale;
    }
    const reply = (await this.blocking!.xreadgroup(
      'GROUP',
      TASK_GROUP,
      this.consumer,
      'COUNT',
      max,
      'BLOCK',
      blockMs,
      'STREAMS',
      ...this.streams,
      ...this.streams.map(() => '>'),
    )) as [string, [string, string[]][]][] | null;
    return (reply ?? []).flatMap(([stream, entries]) =>
      entries.flatMap(([entry, fields]) => parse(stream, entry, fields)),
    );
  }

  /** Acknowledges messages the server has answered for. */
  async ack(messages: readonly TaskMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.open();
    const byStream = new Map<string, string[]>();
    for (const m of messages) byStream.set(m.stream, [...(byStream.get(m.stream) ?? []), m.entry]);
    const pipeline = this.commands!.pipeline();
    for (const [stream, entries] of byStream) pipeline.xack(stream, TASK_GROUP, ...entries);
    await pipeline.exec();
  }

  /** Closes the connections; a blocked read ends with an error. */
  close(): void {
    this.blocking?.disconnect();
    this.commands?.disconnect();
    this.blocking = null;
    this.commands = null;
    this.ready = null;
  }

  private async claimStale(max: number): Promise<TaskMessage[]> {
    const out: TaskMessage[] = [];
    for (const stream of this.streams) {
      if (out.length >= max) break;
      const reply = (await this.commands!.xautoclaim(
        stream,
        TASK_GROUP,
        this.consumer,
        this.staleMs,
        '0-0',
        'COUNT',
        max - out.length,
      )) as [string, [string, string[]][]];
      for (const [entry, fields] of reply[1] ?? []) out.push(...parse(stream, entry, fields));
    }
    return out;
  }

  private open(): Promise<void> {
    if (!this.ready) {
      this.ready = (async () => {
        const { Redis } = await loadIoredis();
        const options = { maxRetriesPerRequest: null, lazyConnect: true } as const;
        this.blocking = new Redis(this.url, options);
        this.commands = new Redis(this.url, options);
        await Promise.all([this.blocking.connect(), this.commands.connect()]);
        for (const stream of this.streams) {
          try {
            // From the start of the stream: messages published before the first worker came are not lost.
            await this.commands.xgroup('CREATE', stream, TASK_GROUP, '0', 'MKSTREAM');
          } catch (e) {
            if (!/BUSYGROUP/.test(String(e))) throw e;
          }
        }
      })();
      this.ready.catch(() => this.close());
    }
    return this.ready;
  }
}

/** ioredis, an optional peer: only workers of a server that dispatches through Redis need it. */
async function loadIoredis(): Promise<{ Redis: typeof Redis }> {
  try {
    return await import('ioredis');
  } catch (e) {
    throw new Error(
      'the server dispatches tasks through Redis, which needs the ioredis package: run `npm install ioredis@6.0.0` beside @weft/worker',
      { cause: e },
    );
  }
}

function parse(stream: string, entry: string, fields: string[] | null): TaskMessage[] {
  if (!fields) return [];
  const f = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!, fields[i + 1]!);
  const runId = f.get('run_id');
  const taskId = f.get('task_id');
  const attempt = Number(f.get('attempt'));
  if (!runId || !taskId || !Number.isInteger(attempt))
    return [{ stream, entry, run_id: '', task_id: '', attempt: 0 }];
  return [{ stream, entry, run_id: runId, task_id: taskId, attempt }];
}
