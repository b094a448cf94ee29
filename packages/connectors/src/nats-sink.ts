import { jetstream } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { type Delivery, type Destination, sinkDestination } from '@weft/engine';
import { errorText, isDelivery, sinkMessage } from './message.js';

/** What a NATS sink needs. */
export interface NatsSinkOptions {
  readonly name: string;
  readonly url: string;
  /** The subject; a message's topic overrides it. */
  readonly subject: string;
  /**
   * Publish through JetStream (the default): each message is acknowledged by a stream, and JetStream
   * drops a redelivery whose `Nats-Msg-Id` it saw within the stream's duplicate window. Without it, a
   * message counts as delivered once the server has it (core NATS keeps nothing for absent subscribers).
   */
  readonly jetstream: boolean;
}

/**
 * The server and credentials a NATS URL gives. The NATS client ignores a user and password written in the
 * URL, so they are taken out of it and passed as its `user` and `pass`.
 */
export function natsServer(url: string): { servers: string; user?: string; pass?: string } {
  const at = /^([a-z]+:\/\/)([^@/\s]*)@(.*)$/i.exec(url);
  if (!at) return { servers: url };
  const [, scheme, userinfo, rest] = at as unknown as [string, string, string, string];
  const colon = userinfo.indexOf(':');
  const user = decodeURIComponent(colon < 0 ? userinfo : userinfo.slice(0, colon));
  const pass = colon < 0 ? undefined : decodeURIComponent(userinfo.slice(colon + 1));
  return { servers: `${scheme}${rest}`, user, ...(pass === undefined ? {} : { pass }) };
}

/** A sink that publishes each message on a NATS subject, with its stable id in `Nats-Msg-Id`. */
export function natsSink(options: NatsSinkOptions): Destination {
  let connection: Promise<NatsConnection> | null = null;
  const connected = async (): Promise<NatsConnection> => {
    if (!connection) {
      connection = connect({ ...natsServer(options.url), timeout: 5_000, maxReconnectAttempts: -1 });
      connection.catch(() => {
        connection = null;
      });
    }
    const nc = await connection;
    if (nc.isClosed()) {
      connection = null;
      return connected();
    }
    return nc;
  };
  return {
    name: sinkDestination(options.name),
    timeoutMs: 15_000,
    async deliver(rows) {
      const out: Delivery[] = [];
      let nc: NatsConnection;
      try {
        nc = await connected();
      } catch (error) {
        return rows.map(() => ({ kind: 'failed', error: `nats: ${errorText(error)}` }));
      }
      const js = options.jetstream ? jetstream(nc) : null;
      await Promise.all(
        rows.map(async (row, i) => {
          const m = sinkMessage(row);
          if (isDelivery(m)) {
            out[i] = m;
            return;
          }
          const subject = m.topic ?? options.subject;
          const h = headers();
          h.set('Weft-Type', m.type);
          try {
            if (js) await js.publish(subject, m.body, { msgID: m.id, headers: h, timeout: 10_000 });
            else {
              h.set('Nats-Msg-Id', m.id);
              nc.publish(subject, m.body, { headers: h });
            }
            out[i] = { kind: 'delivered' };
          } catch (error) {
            out[i] = { kind: 'failed', error: `nats: ${errorText(error)}` };
          }
        }),
      );
      if (!js) {
        try {
          await nc.flush();
        } catch (error) {
          return rows.map(() => ({ kind: 'failed', error: `nats: ${errorText(error)}` }));
        }
      }
      return out;
    },
    async close() {
      const pending = connection;
      connection = null;
      if (pending) await (await pending.catch(() => null))?.close();
    },
  };
}
