import { type Destination, type Outbound, sinkDestination, webhookDestination } from '@weft/engine';
import { amqpSink } from './amqp-sink.js';
import type { SinkConfig } from './config.js';
import { natsSink } from './nats-sink.js';
import { redisStreamSink } from './redis-sink.js';

/**
 * The outbox destination of each configured sink. Connections open on first use. Webhook sinks call out
 * under `outbound` (by default refusing loopback, private, link-local and metadata addresses).
 */
export function sinkDestinations(sinks: readonly SinkConfig[], outbound?: Outbound): Destination[] {
  return sinks.map((s) => sinkDestinationOf(s, outbound));
}

/** The outbox destination of one configured sink. */
export function sinkDestinationOf(sink: SinkConfig, outbound?: Outbound): Destination {
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
        ...(outbound ? { outbound } : {}),
        ...(sink.secret ? { secret: sink.secret } : {}),
      });
  }
}
