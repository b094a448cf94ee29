import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { connect as natsConnect } from '@nats-io/transport-node';
import { parseSinks } from '@weft/connectors';
import { freePort } from '@weft/postgres';
import { serve } from '@weft/server';
import { createTestDatabase, serviceUrl } from '@weft/testing';
import { connect as amqpConnect } from 'amqplib';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// A broker sink's URL names a secret of the namespace (`{{secrets.NAME}}`) instead of holding the password:
// a real Redis user protected by a password (ACL SETUSER) and RabbitMQ's guest user, each reached with the
// password set through the secrets API. The value is filled in at delivery only; the database, the
// dead letters and the errors never hold it.

const [redisUrl, amqpUrl] = await Promise.all([serviceUrl('redis'), serviceUrl('amqp')]);
const KEY = randomBytes(32).toString('base64');
const suffix = randomBytes(4).toString('hex');
const USER = `weft-sink-${suffix}`;
// Characters that mean something in a URL: the filled-in value must stay the password.
const PASSWORD = `p@ss:w/rd?#-${randomBytes(8).toString('hex')}`;
const STREAM = `weft-sink-secret-${suffix}`;
const QUEUE = `weft-sink-secret-${suffix}`;

const hostOf = (url: string) => new URL(url).host;

/** Polls `check` (at most 30 s) until it gives something. */
async function until<T>(check: () => Promise<T | null | undefined | false>): Promise<T> {
  const end = Date.now() + 30_000;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!redisUrl)('a Redis sink whose password is a secret', () => {
  let t: TestServer;
  let admin: Redis;

  beforeAll(async () => {
    admin = new Redis(redisUrl!);
    await admin.call('ACL', 'SETUSER', USER, 'reset', 'on', `>${PASSWORD}`, `~${STREAM}`, '+@all');
    t = await startTestServer(
      { relayPollMs: 50, relayBackoffMs: 50, relayMaxAttempts: 3 },
      {
        secretsKey: KEY,
        sinks: parseSinks({
          bus: {
            kind: 'redis',
            url: `redis://${USER}:{{secrets.BUS_PASSWORD}}@${hostOf(redisUrl!)}`,
            stream: STREAM,
          },
        }),
      },
    );
    const deployed = await t.call(
      'POST',
      '/v1/definitions',
      'name: tell-bus\nnodes:\n  - { id: tell, kind: event, sink: bus, payload: { order: input.order } }\n',
    );
    expect(deployed.status).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
    await admin?.call('ACL', 'DELUSER', USER).catch(() => {});
    await admin?.del(STREAM);
    admin?.disconnect();
  });

  it('dead-letters the message while the secret is unset, then delivers it once set and replayed', async () => {
    await t.call('POST', '/v1/runs', { definition: 'tell-bus', input: { order: 'A-1' } });
    const dead = await until(async () => (await t.call('GET', '/v1/dead-letters')).body.items[0]);
    expect(dead.last_error).toMatch(/secret "BUS_PASSWORD" is not set in namespace "default"/);
    expect(dead.last_error).toMatch(/weft secrets set BUS_PASSWORD/);
    expect((await t.call('PUT', '/v1/secrets/BUS_PASSWORD', { value: PASSWORD })).status).toBe(200);
    expect((await t.call('POST', '/v1/dead-letters/replay', {})).body.replayed).toBe(1);
    const entries = await until(async () => {
      const found = await admin.xrange(STREAM, '-', '+');
      return found.length > 0 ? found : null;
    });
    expect(entries).toHaveLength(1);
    const body = JSON.parse(entries[0]![1][entries[0]![1].indexOf('body') + 1]!);
    expect(body).toMatchObject({ data: { order: 'A-1' } });
    await until(async () => (await t.call('GET', '/v1/dead-letters')).body.items.length === 0);
  });

  it('connects again with a changed secret, and its refusal is kept without the value', async () => {
    const wrong = `not-the-password-${suffix}`;
    expect((await t.call('PUT', '/v1/secrets/BUS_PASSWORD', { value: wrong })).status).toBe(200);
    await t.call('POST', '/v1/runs', { definition: 'tell-bus', input: { order: 'A-2' } });
    const [row] = await until(async () => {
      const rows = await t.db.sql<{ lastError: string | null }[]>`
        SELECT last_error FROM weft.outbox WHERE destination = 'sink:bus' AND last_error IS NOT NULL`;
      return rows.length > 0 ? rows : null;
    });
    expect(row!.lastError).toMatch(/^redis: .*(WRONGPASS|NOAUTH|invalid)/i);
    expect((await admin.xrange(STREAM, '-', '+')).length).toBe(1);
    // The right value again: the waiting message goes out on the relay's next attempt.
    expect((await t.call('PUT', '/v1/secrets/BUS_PASSWORD', { value: PASSWORD })).status).toBe(200);
    if ((await t.call('GET', '/v1/dead-letters')).body.items.length > 0)
      await t.call('POST', '/v1/dead-letters/replay', {});
    await until(async () => (await admin.xrange(STREAM, '-', '+')).length === 2);
    const text = await databaseText(t);
    for (const value of [PASSWORD, encodeURIComponent(PASSWORD), wrong]) expect(text).not.toContain(value);
  });
});

describe.skipIf(!amqpUrl)('a RabbitMQ sink whose password is a secret', () => {
  it('publishes with the password read from the namespace at delivery', async () => {
    const url = new URL(amqpUrl!);
    const t = await startTestServer(
      { relayPollMs: 50, relayBackoffMs: 50 },
      {
        secretsKey: KEY,
        sinks: parseSinks({
          rabbit: {
            kind: 'amqp',
            url: `amqp://${url.username || 'guest'}:{{secrets.RABBIT_PASSWORD}}@${url.host}`,
            routing_key: QUEUE,
          },
        }),
      },
    );
    const conn = await amqpConnect(amqpUrl!);
    try {
      const ch = await conn.createChannel();
      await ch.assertQueue(QUEUE, { durable: false, autoDelete: false });
      const password = decodeURIComponent(url.password || 'guest');
      expect((await t.call('PUT', '/v1/secrets/RABBIT_PASSWORD', { value: password })).status).toBe(200);
      await t.call(
        'POST',
        '/v1/definitions',
        'name: tell-rabbit\nnodes:\n  - { id: tell, kind: event, sink: rabbit, payload: { order: input.order } }\n',
      );
      await t.call('POST', '/v1/runs', { definition: 'tell-rabbit', input: { order: 'R-1' } });
      const message = await until(async () => ch.get(QUEUE, { noAck: true }));
      expect(JSON.parse(message.content.toString())).toMatchObject({ data: { order: 'R-1' } });
      await ch.deleteQueue(QUEUE);
    } finally {
      await conn.close();
      await t.close();
    }
  });
});

const NATS_SERVER = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find(
  (p) => existsSync(p),
);
if (!NATS_SERVER)
  console.warn('skipping the NATS credentials test: it starts its own nats-server, and none is installed');

describe.skipIf(!NATS_SERVER)('a NATS sink whose password is a secret', () => {
  // A NATS server of the test's own that takes only user "weft" with PASSWORD: the NATS client does not
  // read credentials written in a URL, so this shows the sink hands them over.
  let nats: ChildProcess;
  let url: string;
  beforeAll(async () => {
    const port = await freePort();
    nats = spawn(
      NATS_SERVER!,
      ['-a', '127.0.0.1', '-p', String(port), '--user', 'weft', '--pass', PASSWORD],
      {
        stdio: 'ignore',
      },
    );
    url = `nats://127.0.0.1:${port}`;
    await until(async () => {
      const nc = await natsConnect({ servers: url, user: 'weft', pass: PASSWORD }).catch(() => null);
      await nc?.close();
      return nc !== null;
    });
  });
  afterAll(() => {
    nats?.kill('SIGTERM');
  });

  it('publishes with the user and password filled in from the namespace', async () => {
    const subject = `weft.secret.${suffix}`;
    const t = await startTestServer(
      { relayPollMs: 50, relayBackoffMs: 50 },
      {
        secretsKey: KEY,
        sinks: parseSinks({
          bus: {
            kind: 'nats',
            url: `nats://weft:{{secrets.NATS_PASSWORD}}@${hostOf(url)}`,
            subject,
            jetstream: false,
          },
        }),
      },
    );
    const nc = await natsConnect({ servers: url, user: 'weft', pass: PASSWORD });
    try {
      const got: string[] = [];
      nc.subscribe(subject, {
        callback: (_e, m) => {
          got.push(m.string());
        },
      });
      await nc.flush();
      expect((await t.call('PUT', '/v1/secrets/NATS_PASSWORD', { value: PASSWORD })).status).toBe(200);
      await t.call(
        'POST',
        '/v1/definitions',
        'name: tell-nats\nnodes:\n  - { id: tell, kind: event, sink: bus, payload: { order: input.order } }\n',
      );
      await t.call('POST', '/v1/runs', { definition: 'tell-nats', input: { order: 'N-1' } });
      const [message] = await until(async () => (got.length > 0 ? got : null));
      expect(JSON.parse(message!)).toMatchObject({ data: { order: 'N-1' } });
    } finally {
      await nc.close();
      await t.close();
    }
  });
});

describe('a sink naming secrets on a server without a secrets key', () => {
  it('stops the server at start, naming the sink and the setting', async () => {
    const db = await createTestDatabase();
    try {
      await expect(
        serve({
          databaseUrl: db.url,
          port: 0,
          logLevel: 'silent',
          sinks: parseSinks({ bus: { kind: 'redis', url: 'redis://u:{{secrets.P}}@127.0.0.1:6379' } }),
        }),
      ).rejects.toThrow(/sink "bus" names secrets.*WEFT_SECRETS_KEY/);
    } finally {
      await db.drop();
    }
  });
});

/** Every row of every table of the weft schema, as text. */
async function databaseText(t: TestServer): Promise<string> {
  const tables = await t.db.sql<{ name: string }[]>`
    SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'weft'`;
  const parts: string[] = [];
  for (const { name } of tables) {
    const rows = await t.db.sql.unsafe(`SELECT t::text AS row FROM weft."${name}" t`);
    parts.push(...rows.map((r) => String(r.row)));
  }
  return parts.join('\n');
}
