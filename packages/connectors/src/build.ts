import { type Destination, sinkDestination, webhookDestination } from '@weft/engine';
import { amqpSink } from './amqp-sink.js';
import type { SinkConfig } from './config.js';
import { natsSink } from './nats-sink.js';
import { redisStreamSink } from './redis-sink.js';

/** The outbox destination of each configured sink. Connections open on first use. */
export function sinkDestinations(sinks: readonly SinkConfig[]): Destination[] {
  return sinks.map(sinkDestinationOf);
}

/** The outbox destination of one configured sink. */
export function sinkDestinationOf(sink: SinkConfig): Destination {
  switch (sink.kind) {
    case 'redis':
      return redisStreamSink(sink);
    case 'nats':
      return natsSink(sink);
    case 'amqp':
      return amqpSink(sink);
    case 'webhook':
      return webhookDestination({
        name: sinkDestination(sink.name),
        url: sink.url,
        timeoutMs: sink.timeoutMs,
        ...(sink.secret ? { secret: sink.secret } : {}),
      });
  }
}
