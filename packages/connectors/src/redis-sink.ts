import { type Delivery, type Destination, sinkDestination } from '@weft/engine';
import { Redis } from 'ioredis';
import { errorText, isDelivery, sinkMessage } from './message.js';

/** What a Redis Streams sink needs. */
export interface RedisSinkOptions {
  readonly name: string;
  readonly url: string;
  /** The stream key; a message's topic overrides it. */
  readonly stream: string;
  /** Streams are trimmed to about this many entries. */
  readonly maxLen: number;
}

/** Opens a Redis client that fails commands quickly while Redis is unreachable (the relay backs off). */
export function redisClient(url: string): Redis {
  return new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
    enableOfflineQueue: true,
  });
}

/**
 * A sink that appends each message to a Redis stream (XADD): fields `id` (the stable message id, for
 * consumers to deduplicate redeliveries), `type` and `body` (the JSON message). One pipeline per batch;
 * each entry succeeds or fails on its own.
 */
export function redisStreamSink(options: RedisSinkOptions): Destination {
  let client: Redis | null = null;
  // Why the connection last failed (a refused password, say): a command then fails only with
  // "Connection is closed", so the cause is added to the rows' error.
  let cause: string | null = null;
  const failure = (error: unknown) => {
    const text = errorText(error);
    return `redis: ${text}${cause && !text.includes(cause) ? ` (${cause})` : ''}`;
  };
  const connected = async () => {
    if (!client) {
      client = redisClient(options.url);
      client.on('error', (error) => {
        cause = errorText(error);
      });
      client.on('ready', () => {
        cause = null;
      });
    }
    if (client.status === 'wait') await client.connect();
    return client;
  };
  return {
    name: sinkDestination(options.name),
    timeoutMs: 15_000,
    async deliver(rows) {
      const messages = rows.map(sinkMessage);
      const out: Delivery[] = messages.map((m) => (isDelivery(m) ? m : { kind: 'delivered' }));
      const sendable = messages.flatMap((m, i) => (isDelivery(m) ? [] : [{ m, i }]));
      if (sendable.length === 0) return out;
      try {
        const redis = await connected();
        const pipeline = redis.pipeline();
        for (const { m } of sendable)
          pipeline.xadd(
            m.topic ?? options.stream,
            'MAXLEN',
            '~',
            options.maxLen,
            '*',
            'id',
            m.id,
            'type',
            m.type,
            'body',
            m.body,
          );
        const results = (await pipeline.exec()) ?? [];
        sendable.forEach(({ i }, k) => {
          const error = results[k]?.[0];
          if (error || !results[k]) out[i] = { kind: 'failed', error: failure(error ?? 'no reply') };
        });
      } catch (error) {
        for (const { i } of sendable) out[i] = { kind: 'failed', error: failure(error) };
      }
      return out;
    },
    async close() {
      client?.disconnect();
      client = null;
    },
  };
}
