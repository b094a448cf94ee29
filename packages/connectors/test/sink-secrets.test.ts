import { fillUrlSecrets, natsServer, redactValues, sinkWithUrlSecrets } from '@weft/connectors';
import { WeftError } from '@weft/core';
import type { DeliveryContext, Destination, OutboxRow } from '@weft/engine';
import { describe, expect, it } from 'vitest';

// How a sink's URL is filled from secrets, how their values are kept out of error text, and how a NATS URL's
// credentials reach the NATS client. The sinks themselves are tested against real brokers in
// packages/server/test/sink-secrets.test.ts.

describe('secrets in a sink URL', () => {
  it('fills each placeholder percent-encoded, so a password with URL characters stays the password', () => {
    const values = new Map([['P', 'p@ss:w/rd?#']]);
    const url = fillUrlSecrets('redis://weft:{{secrets.P}}@redis.internal:6379/2', values);
    expect(url).toBe('redis://weft:p%40ss%3Aw%2Frd%3F%23@redis.internal:6379/2');
    const parsed = new URL(url);
    expect(parsed.host).toBe('redis.internal:6379');
    expect(decodeURIComponent(parsed.password)).toBe('p@ss:w/rd?#');
    expect(fillUrlSecrets('amqp://u:{{secrets.UNSET}}@h', values)).toBe('amqp://u:{{secrets.UNSET}}@h');
  });

  it('redacts a value, raw or as written into the URL, from error text', () => {
    const values = new Map([['P', 'p@ss:word']]);
    expect(redactValues('auth failed for redis://u:p%40ss%3Aword@h and p@ss:word', values)).toBe(
      'auth failed for redis://u:[redacted]@h and [redacted]',
    );
  });

  it('passes a NATS URL user and password to the client, which ignores them in the URL', () => {
    expect(natsServer('nats://weft:s%40cret@nats.internal:4222')).toEqual({
      servers: 'nats://nats.internal:4222',
      user: 'weft',
      pass: 's@cret',
    });
    expect(natsServer('nats://127.0.0.1:4222')).toEqual({ servers: 'nats://127.0.0.1:4222' });
  });
});

describe('a sink whose URL names secrets', () => {
  const row = (namespace: string) =>
    ({
      id: '1',
      namespace,
      payload: { kind: 'publish', topic: null, message: { id: 'm', type: 't' } },
    }) as unknown as OutboxRow;
  const context = {} as DeliveryContext;
  /** A sink that records the URLs it was opened with, and whose deliveries fail with the URL in the error. */
  const recording = () => {
    const opened: string[] = [];
    const open = (url: string): Destination => {
      opened.push(url);
      return {
        name: 'sink:bus',
        deliver: async (rows) => rows.map(() => ({ kind: 'failed', error: `refused at ${url}` })),
      };
    };
    return { opened, open };
  };

  it('opens one connection per namespace value, and keeps the values out of the errors', async () => {
    const { opened, open } = recording();
    const values: Record<string, string> = { a: 'alpha-pass', b: 'bravo-pass' };
    const sink = sinkWithUrlSecrets(
      'bus',
      'redis://u:{{secrets.P}}@h',
      async (ns) => new Map([['P', values[ns]!]]),
      open,
    );
    const out = await sink.deliver([row('a'), row('b'), row('a')], context);
    expect(opened).toEqual(['redis://u:alpha-pass@h', 'redis://u:bravo-pass@h']);
    expect(out.map((d) => (d.kind === 'failed' ? d.error : d.kind))).toEqual([
      'refused at redis://u:[redacted]@h',
      'refused at redis://u:[redacted]@h',
      'refused at redis://u:[redacted]@h',
    ]);
  });

  it('dead-letters at once for a secret not set, but retries when the secrets could not be read', async () => {
    const { open } = recording();
    const unset = sinkWithUrlSecrets(
      'bus',
      'redis://u:{{secrets.P}}@h',
      async () => {
        throw new WeftError('secret_not_found', 'secret "P" is not set in namespace "a"', 404);
      },
      open,
    );
    expect(await unset.deliver([row('a')], context)).toEqual([
      {
        kind: 'failed',
        error: 'sink "bus" in namespace "a": secret "P" is not set in namespace "a"',
        permanent: true,
      },
    ]);
    const away = sinkWithUrlSecrets(
      'bus',
      'redis://u:{{secrets.P}}@h',
      async () => {
        throw new Error('connection terminated');
      },
      open,
    );
    expect(await away.deliver([row('a')], context)).toEqual([
      { kind: 'failed', error: 'sink "bus" in namespace "a": connection terminated' },
    ]);
  });
});
