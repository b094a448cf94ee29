import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { humanTaskSinksOf, parseSinks, redisStreamSink, sinkDestinationOf } from '@weft/connectors';
import { createOutbound, type Engine } from '@weft/engine';
import { armFault, decideRound, deliverBatch, timerRound } from '@weft/engine/internal';
import { serviceUrl } from '@weft/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Harness, harness } from '../../postgres/test/helpers.js';

// Human task changes (opened, claimed, released, answered, expired) announced through the outbox to real
// sinks: a webhook receiver this test starts and a Redis stream. Each change is written as outbox rows in
// the transaction of the change (invariant 7), so it is delivered once per change with a stable id
// (invariant 12), and a change whose transaction rolls back (a fault after the writes) sends nothing.

const redisUrl = await serviceUrl('redis');
const stream = `weft-human-${randomBytes(4).toString('hex')}`;

interface Message {
  id: string;
  type: string;
  source: { run_id: string; node_id: string; namespace: string; version: number };
  data: { task_id: string; user?: string | null; data?: unknown; title: string };
}

const hooked: { id: string; header: string | undefined; message: Message }[] = [];
let receiver: Server;
let h: Harness;
let redis: Redis;

beforeAll(async () => {
  receiver = createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const message = JSON.parse(text) as Message;
    hooked.push({ id: message.id, header: req.headers['x-weft-id'] as string | undefined, message });
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/inbox`;
  const outbound = createOutbound('127.0.0.1');
  const destinations = [
    sinkDestinationOf({ kind: 'webhook', name: 'hook', url, timeoutMs: 5000 }, { outbound }),
  ];
  if (redisUrl) destinations.push(redisStreamSink({ name: 'bus', url: redisUrl, stream, maxLen: 1000 }));
  // Loops off: the test runs the timers, decisions and relay itself, so that no relay transaction is
  // running while a test forces a rollback (the fault point is shared by the whole process).
  h = await harness(
    { backgroundLoops: false, systemTasks: false },
    { destinations, humanTaskSinks: { default: ['hook'], '*': redisUrl ? ['bus'] : [] } },
  );
  await h.engine.definitions.deploy(
    'default',
    `name: approve
nodes:
  - id: ask
    kind: human
    title: Approve the refund
    form: { type: object, required: [ok], properties: { ok: { type: boolean } } }
  - { id: after_deadline, kind: noop }
  - id: slow
    kind: human
    title: Answer in time
    deadline: { after: 1s, to: after_deadline }
edges: []
`,
  );
  if (redisUrl) redis = new Redis(redisUrl);
});

afterAll(async () => {
  await redis?.quit();
  await h?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

/** The open human task of `nodeId` in a run, once it is in the inbox. */
async function taskOf(engine: Engine, runId: string, nodeId: string): Promise<string> {
  return eventually(async () => {
    const open = await engine.inbox.list({ namespace: 'default', runId, limit: 10 } as never);
    return open.find((t) => t.nodeId === nodeId)?.taskId;
  });
}

/** Runs `fn` with the transaction forced to roll back after its writes; expects it to throw. */
async function rolledBack(fn: () => Promise<unknown>): Promise<void> {
  const disarm = armFault('pass.after-write', () => {
    throw new Error('injected rollback');
  });
  try {
    await expect(fn()).rejects.toThrow('injected rollback');
  } finally {
    disarm();
  }
}

describe('human task events', () => {
  it('announces each change once, with a stable id, and nothing of a change that rolled back', async () => {
    const run = await h.engine.runs.start({ namespace: 'default', definition: 'approve', input: {} });
    const ask = await taskOf(h.engine, run.id, 'ask');
    const slow = await taskOf(h.engine, run.id, 'slow');
    const inbox = h.engine.inbox;
    await rolledBack(() => inbox.claim('default', ask, 'mallory'));
    await inbox.claim('default', ask, 'ann');
    await inbox.release('default', ask, 'ann');
    await inbox.claim('default', ask, 'bob');
    await expect(inbox.complete('default', ask, 'bob', { ok: 'yes' })).rejects.toThrow(/does not match/);
    await rolledBack(() => inbox.complete('default', ask, 'bob', { ok: false }));
    await inbox.complete('default', ask, 'bob', { ok: true });
    // The deadline of `slow` passes last; then the relay delivers everything, and the outbox is empty.
    await eventually(
      async () => {
        await timerRound(h.engine.context);
        await decideRound(h.engine.context);
        const [row] = await h.db.sql`SELECT 1 FROM weft.human_tasks WHERE state = 'expired'`;
        return row ? true : undefined;
      },
      30_000,
      'the deadline of the slow task',
    );
    await eventually(async () => {
      for (const d of ['sink:hook', 'sink:bus']) await deliverBatch(h.engine.context, d);
      return (await h.db.sql`SELECT 1 FROM weft.outbox`).length === 0 ? true : undefined;
    });
    const expected = [
      ['human_task.opened', ask, undefined],
      ['human_task.opened', slow, undefined],
      ['human_task.claimed', ask, 'ann'],
      ['human_task.released', ask, 'ann'],
      ['human_task.claimed', ask, 'bob'],
      ['human_task.answered', ask, 'bob'],
      ['human_task.expired', slow, undefined],
    ].sort((a, b) => String(a).localeCompare(String(b)));
    const seen = (messages: Message[]) =>
      messages
        .map((m) => [m.type, m.data.task_id, m.data.user ?? undefined])
        .sort((a, b) => String(a).localeCompare(String(b)));
    expect(seen(hooked.map((m) => m.message))).toEqual(expected);
    expect(new Set(hooked.map((m) => m.id)).size).toBe(expected.length);
    for (const m of hooked) expect(m.header).toBe(m.id);
    const answered = hooked.find((m) => m.message.type === 'human_task.answered')!.message;
    expect(answered).toMatchObject({
      source: { run_id: run.id, node_id: 'ask', namespace: 'default', version: 1 },
      data: { task_id: ask, title: 'Approve the refund', user: 'bob', data: { ok: true } },
    });
    if (!redis) return;
    const entries = (await redis.xrange(stream, '-', '+')).map(([, f]) => {
      const fields: Record<string, string> = {};
      for (let i = 0; i < f.length; i += 2) fields[f[i]!] = f[i + 1]!;
      return fields;
    });
    expect(entries.map((e) => e.id).sort()).toEqual(hooked.map((m) => m.id).sort());
    expect(seen(entries.map((e) => JSON.parse(e.body!) as Message))).toEqual(expected);
  });
});

describe('human task sinks in the sink settings', () => {
  it('reads human_tasks per sink, and refuses what is not a list of namespaces', () => {
    const sinks = parseSinks({
      hook: { kind: 'webhook', url: 'https://h.example', human_tasks: ['default', 'billing'] },
      bus: { kind: 'redis', human_tasks: ['*'] },
      quiet: { kind: 'nats' },
    });
    expect(humanTaskSinksOf(sinks)).toEqual({ default: ['hook'], billing: ['hook'], '*': ['bus'] });
    expect(() => parseSinks({ w: { kind: 'redis', human_tasks: 'default' } })).toThrow(
      /sink "w": "human_tasks" must be a list of namespaces/,
    );
    expect(() => parseSinks({ w: { kind: 'redis', human_tasks: ['Bad Name'] } })).toThrow(/human_tasks/);
  });
});
