import { secretNamesIn } from '@weft/core';
import { type Destination, type Outbound, sinkDestination, webhookDestination } from '@weft/engine';
import { amqpSink } from './amqp-sink.js';
import type { SinkConfig } from './config.js';
import { natsSink } from './nats-sink.js';
import { redisStreamSink } from './redis-sink.js';
import { type SecretResolver, sinkWithUrlSecrets } from './sink-secrets.js';

/** What building sink destinations may use besides the sinks' settings. */
export interface SinkServices {
  /** Which addresses webhook sinks may reach (by default none that is loopback, private or metadata). */
  readonly outbound?: Outbound;
  /** Reads the secrets a sink's URL names (`{{secrets.NAME}}`), in the namespace of the rows it delivers. */
  readonly secrets?: SecretResolver;
}

/**
 * The outbox destination of each configured sink. Connections open on first use. Webhook sinks call out
 * under `outbound` (by default refusing loopback, private, link-local and metadata addresses).
 */
export function sinkDestinations(sinks: readonly SinkConfig[], services: SinkServices = {}): Destination[] {
  return sinks.map((s) => sinkDestinationOf(s, services));
}

/**
 * The outbox destination of one configured sink. A broker sink whose URL names secrets connects with the
 * URL filled from the secrets of each row's namespace; a webhook sink fills its URL per request.
 */
export function sinkDestinationOf(sink: SinkConfig, services: SinkServices = {}): Destination {
  if (sink.kind === 'webhook')
    return webhookDestination({
      name: sinkDestination(sink.name),
      url: sink.url,
      timeoutMs: sink.timeoutMs,
      ...(services.outbound ? { outbound: services.outbound } : {}),
      ...(services.secrets ? { secrets: services.secrets } : {}),
      ...(sink.secret ? { secret: sink.secret } : {}),
    });
  const open = (url: string): Destination => {
    switch (sink.kind) {
      case 'redis':
        return redisStreamSink({ ...sink, url });
      case 'nats':
        return natsSink({ ...sink, url });
      case 'amqp':
        return amqpSink({ ...sink, url });
    }
  };
  if (secretNamesIn(sink.url).length === 0) return open(sink.url);
  return sinkWithUrlSecrets(sink.name, sink.url, services.secrets, open);
}

/** The sinks whose URL names secrets (a server without a secrets key cannot deliver to them). */
export function sinksNamingSecrets(sinks: readonly SinkConfig[]): string[] {
  return sinks.filter((s) => secretNamesIn(s.url).length > 0).map((s) => s.name);
}
