import { type Delivery, type Destination, sinkDestination } from '@weft/engine';
import { type ChannelModel, type ConfirmChannel, connect } from 'amqplib';
import { errorText, isDelivery, sinkMessage } from './message.js';

/** What a RabbitMQ (AMQP 0-9-1) sink needs. */
export interface AmqpSinkOptions {
  readonly name: string;
  readonly url: string;
  /** The exchange; empty for the default exchange, where the routing key is a queue name. */
  readonly exchange: string;
  /** The routing key; a message's topic overrides it. */
  readonly routingKey: string;
}

/**
 * A sink that publishes each message, persistent, with the stable id as the AMQP `messageId`, on a
 * confirm channel: a message is delivered when the broker confirms it, and a nack fails only that row.
 */
export function amqpSink(options: AmqpSinkOptions): Destination {
  let open: Promise<{ model: ChannelModel; channel: ConfirmChannel }> | null = null;
  const reset = () => {
    const was = open;
    open = null;
    void was?.then(({ model }) => model.close()).catch(() => {});
  };
  const connected = () => {
    if (!open) {
      open = (async () => {
        const model = await connect(options.url, { timeout: 5_000 });
        model.on('error', () => {});
        model.on('close', () => {
          open = null;
        });
        const channel = await model.createConfirmChannel();
        channel.on('error', () => {});
        channel.on('close', () => reset());
        return { model, channel };
      })();
      open.catch(() => {
        open = null;
      });
    }
    return open;
  };
  return {
    name: sinkDestination(options.name),
    timeoutMs: 15_000,
    async deliver(rows) {
      let channel: ConfirmChannel;
      try {
        channel = (await connected()).channel;
      } catch (error) {
        return rows.map(() => ({ kind: 'failed', error: `amqp: ${errorText(error)}` }));
      }
      return Promise.all(
        rows.map(
          (row) =>
            new Promise<Delivery>((resolve) => {
              const m = sinkMessage(row);
              if (isDelivery(m)) return resolve(m);
              try {
                channel.publish(
                  options.exchange,
                  m.topic ?? options.routingKey,
                  Buffer.from(m.body),
                  { messageId: m.id, type: m.type, contentType: 'application/json', persistent: true },
                  (error) =>
                    resolve(
                      error ? { kind: 'failed', error: `amqp: ${errorText(error)}` } : { kind: 'delivered' },
                    ),
                );
              } catch (error) {
                reset();
                resolve({ kind: 'failed', error: `amqp: ${errorText(error)}` });
              }
            }),
        ),
      );
    },
    async close() {
      const was = open;
      open = null;
      if (was) await (await was.catch(() => null))?.model.close().catch(() => {});
    },
  };
}
