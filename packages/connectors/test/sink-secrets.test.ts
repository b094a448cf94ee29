import { fillUrlSecrets, natsServer, redactValues } from '@weft/connectors';
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
