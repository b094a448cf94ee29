import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { amqpSink, natsSink, parseSinks, redisStreamSink } from '@weft/connectors';
import { type Destination, sinkDestination } from '@weft/engine';
import { armFault, deliverBatch } from '@weft/engine/internal';
import { serviceUrl } from '@weft/testing';
import { connect as amqpConnect } from 'amqplib';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, type Harness, harness } from '../../postgres/test/helpers.js';

// Event nodes publishing to the real Redis, NATS and RabbitMQ, through the outbox relay on real
// PostgreSQL. Each message carries an id derived from the task identity; a relay that dies between
// delivery and its mark delivers again, and the consumer sees the same id twice.

const [redisUrl, natsUrl, amqpUrl] = await Promise.all([
  serviceUrl('redis'),
  serviceUrl('nats'),
  serviceUrl('amqp'),
]);
const suffix = randomBytes(4).toString('hex');
const harnesses: Harness[] = [];
const closers: (() => Promise<unknown>)[] = [];

afterAll(async () => {
  for (const close of closers) await close().catch(() => {});
  for (const h of harnesses) await h.close();
});

/** An engine whose relay only runs when a test says so (loops off), with these destinations. */
async function engineWith(destinations: Destination[]): Promise<Harness> {
  const h = await harness(
    { backgroundLoops: false, systemTasks: false, relayBackoffMs: 20 },
    { destinations },
  );
  harnesses.push(h);
  for (const d of destinations) closers.push(async () => d.close?.());
  return h;
}

/** Deploys a one-node workflow publishing `{order}` to `sink` and starts a run. */
async function publishOnce(h: Harness, sink: string, topic?: string): Promise<string> {
  const name = `pub-${sink}`;
  await h.engine.definitions.deploy(
    'default',
    `name: ${name}\nnodes:\n  - { id: tell, kind: event, sink: ${sink}${topic ? `, topic: "${topic}"` : ''}, payload: { order: input.order } }\n`,
  );
  const run = await h.engine.runs.start({ namespace: 'default', definition: name, input: { order: 'o-1' } });
  return run.id;
}

async function relayAll(h: Harness, destination: string): Promise<void> {
  await eventually(async () => ((await deliverBatch(h.engine.context, destination)) > 0 ? true : undefined));
}

function crashOnce(): () => void {
  let armed = true;
  return armFault('relay.after-deliver', () => {
    if (!armed) return;
    armed = false;
    throw new Error('killed between delivery and mark');
  });
}

describe('sink settings', () => {
  it('reads every kind and reports every problem with the sink name', () => {
    const sinks = parseSinks(
      {
        r: { kind: 'redis', stream: 's' },
        n: { kind: 'nats', subject: 'x.y', jetstream: false },
        a: { kind: 'amqp', exchange: 'ex', routing_key: 'k' },
        w: { kind: 'webhook', url: 'https://h.example', secret_env: 'HOOK_SECRET' },
      },
      { HOOK_SECRET: 's3' },
    );
    expect(sinks.map((s) => s.kind)).toEqual(['redis', 'nats', 'amqp', 'webhook']);
    expect(sinks[3]).toMatchObject({ secret: 's3' });
    expect(() =>
      parseSinks({ bad: { kind: 'kafka' }, w: { kind: 'webhook', url: 'ftp://x', secret_env: 'NOPE' } }, {}),
    ).toThrow(/sink "bad": "kind" must be one of[\s\S]*sink "w": "url" must be an http[\s\S]*NOPE/);
  });
});

describe.skipIf(!redisUrl)('Redis Streams sink', () => {
  const stream = `weft-test-${suffix}`;
  it('appends the message with its stable id; a relay killed between delivery and mark redelivers it', async () => {
    const sink = redisStreamSink({ name: 'bus', url: redisUrl!, stream, maxLen: 1000 });
    const h = await engineWith([sink]);
    const runId = await publishOnce(h, 'bus');
    // A relay in another process delivers, then dies before its transaction commits.
    const script = fileURLToPath(new URL('./fixtures/relay-once.mjs', import.meta.url));
    const code = await new Promise<number | null>((resolve) => {
      const child = execFile(
        process.execPath,
        [script, h.db.url, redisUrl!, stream],
        { env: { ...process.env, WEFT_FAULTS: 'relay.after-deliver=exit' } },
        () => {},
      );
      child.on('exit', (c) => resolve(c));
    });
    expect(code).toBe(86);
    const redis = new Redis(redisUrl!);
    closers.push(async () => redis.quit());
    const read = async () =>
      (await redis.xrange(stream, '-', '+')).map(([, f]) => Object.fromEntries(pairs(f)));
    expect(await read()).toHaveLength(1); // delivered once already...
    const [pending] = await h.db.sql`SELECT attempts FROM weft.outbox WHERE run_id = ${runId}::uuid`;
    expect(pending).toBeDefined(); // ...but not marked: the row is still there.
    await relayAll(h, sinkDestination('bus'));
    const entries = await read();
    expect(entries).toHaveLength(2);
    expect(entries[0]!.id).toBe(entries[1]!.id);
    expect(JSON.parse(entries[0]!.body!)).toMatchObject({
      id: entries[0]!.id,
      data: { order: 'o-1' },
      source: { run_id: runId, node_id: 'tell' },
    });
    const [gone] = await h.db.sql`SELECT 1 FROM weft.outbox WHERE run_id = ${runId}::uuid`;
    expect(gone).toBeUndefined();
  });
});

describe.skipIf(!natsUrl)('NATS sink', () => {
  it('publishes through JetStream with Nats-Msg-Id; a redelivery is recognised as the same message', async () => {
    const subject = `weft.test.${suffix}`;
    const nc = await natsConnect({ servers: natsUrl! });
    closers.push(async () => nc.close());
    const jsm = await jetstreamManager(nc);
    const streamName = `WEFT_TEST_${suffix}`;
    await jsm.streams.add({ name: streamName, subjects: [subject], duplicate_window: 60_000_000_000 });
    closers.push(async () => jsm.streams.delete(streamName));
    const h = await engineWith([natsSink({ name: 'nats-js', url: natsUrl!, subject, jetstream: true })]);
    const runId = await publishOnce(h, 'nats-js');
    const disarm = crashOnce();
    await expect(deliverBatch(h.engine.context, sinkDestination('nats-js'))).rejects.toThrow(/killed/);
    disarm();
    await relayAll(h, sinkDestination('nats-js'));
    const info = await jsm.streams.info(streamName);
    // Delivered twice, stored once: JetStream dropped the second copy by its id.
    expect(info.state.messages).toBe(1);
    const stored = await jsm.streams.getMessage(streamName, { seq: 1 });
    const body = JSON.parse(new TextDecoder().decode(stored!.data));
    expect(stored!.header.get('Nats-Msg-Id')).toBe(body.id);
    expect(body).toMatchObject({ source: { run_id: runId }, data: { order: 'o-1' } });
  });

  it('publishes on core NATS when JetStream is off: a subscriber sees the same id twice', async () => {
    const subject = `weft.core.${suffix}`;
    const nc = await natsConnect({ servers: natsUrl! });
    closers.push(async () => nc.close());
    const ids: string[] = [];
    const sub = nc.subscribe(subject, {
      callback: (_e, msg) => {
        ids.push(msg.headers?.get('Nats-Msg-Id') ?? '');
      },
    });
    await nc.flush();
    const h = await engineWith([natsSink({ name: 'nats-core', url: natsUrl!, subject, jetstream: false })]);
    await publishOnce(h, 'nats-core');
    const disarm = crashOnce();
    await expect(deliverBatch(h.engine.context, sinkDestination('nats-core'))).rejects.toThrow(/killed/);
    disarm();
    await relayAll(h, sinkDestination('nats-core'));
    await eventually(async () => (ids.length === 2 ? true : undefined));
    sub.unsubscribe();
    expect(ids[0]).toBe(ids[1]);
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe.skipIf(!amqpUrl)('RabbitMQ sink', () => {
  it('publishes with publisher confirms and the id as messageId; a redelivery carries the same id', async () => {
    const queue = `weft-test-${suffix}`;
    const conn = await amqpConnect(amqpUrl!);
    closers.push(async () => conn.close());
    const ch = await conn.createChannel();
    await ch.assertQueue(queue, { durable: false, autoDelete: false });
    closers.push(async () => {
      const c = await conn.createChannel();
      await c.deleteQueue(queue);
    });
    const h = await engineWith([
      amqpSink({ name: 'rabbit', url: amqpUrl!, exchange: '', routingKey: queue }),
    ]);
    const runId = await publishOnce(h, 'rabbit');
    const disarm = crashOnce();
    await expect(deliverBatch(h.engine.context, sinkDestination('rabbit'))).rejects.toThrow(/killed/);
    disarm();
    await relayAll(h, sinkDestination('rabbit'));
    const got: { id: string | undefined; body: { source: { run_id: string } } }[] = [];
    await eventually(async () => {
      const m = await ch.get(queue, { noAck: true });
      if (m) got.push({ id: m.properties.messageId as string, body: JSON.parse(m.content.toString()) });
      return got.length === 2 ? true : undefined;
    });
    expect(got[0]!.id).toBe(got[1]!.id);
    expect(got[0]!.body.source.run_id).toBe(runId);
  });
});

// Needs no broker: the sink points at a port nothing listens on, so it runs wherever the suite runs.
describe('RabbitMQ sink without a broker', () => {
  it('a sink that cannot reach its broker fails the delivery and the row backs off', async () => {
    const h = await engineWith([
      amqpSink({ name: 'nowhere', url: 'amqp://guest:guest@127.0.0.1:1', exchange: '', routingKey: 'x' }),
    ]);
    const runId = await publishOnce(h, 'nowhere');
    await deliverBatch(h.engine.context, sinkDestination('nowhere'));
    const [row] = await h.db.sql<{ attempts: number; lastError: string }[]>`
      SELECT attempts, last_error FROM weft.outbox WHERE run_id = ${runId}::uuid`;
    expect(row).toMatchObject({ attempts: 1, lastError: expect.stringMatching(/^amqp: /) });
  });
});

function pairs(fields: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) out.push([fields[i]!, fields[i + 1]!]);
  return out;
}
