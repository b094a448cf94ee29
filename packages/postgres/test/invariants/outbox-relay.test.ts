import { randomUUID } from 'node:crypto';
import {
  type Destination,
  Engine,
  emptyWriteSet,
  type OutboxRow,
  type OutboxWrite,
  sinkDestination,
} from '@weft/engine';
import { armFault, deliverBatch } from '@weft/engine/internal';
import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers.js';

// Invariants 7 (nothing leaves a transaction before it commits), 8 (nothing is silently dropped) and 12
// (stable message ids), for the outbox relay: claim, deliver and mark in one transaction, with several relays
// on their own connections at once.

let db: TestDatabase;
const relays: Engine[] = [];

/** A sink that counts deliveries by message id, taking `delayMs` per batch. */
function counter(name: string, delayMs = 0): Destination & { seen: Map<string, number>; rows: OutboxRow[] } {
  const seen = new Map<string, number>();
  const rows: OutboxRow[] = [];
  return {
    name: sinkDestination(name),
    seen,
    rows,
    async deliver(batch) {
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      for (const row of batch) {
        rows.push(row);
        seen.set(row.messageId, (seen.get(row.messageId) ?? 0) + 1);
      }
      return batch.map(() => ({ kind: 'delivered' as const }));
    },
  };
}

function relay(destinations: Destination[], config: Partial<Engine['context']['config']> = {}): Engine {
  const engine = new Engine({
    store: new PgStore(db.pool(3)),
    destinations,
    config: {
      backgroundLoops: false,
      systemTasks: false,
      crossProcessWakeups: false,
      relayBatch: 10,
      relayBackoffMs: 40,
      relayMaxAttempts: 3,
      ...config,
    },
  });
  relays.push(engine);
  return engine;
}

async function put(sink: string, count: number): Promise<OutboxWrite[]> {
  const runId = randomUUID();
  const rows: OutboxWrite[] = Array.from({ length: count }, (_, i) => ({
    runId,
    namespace: 'default',
    taskId: null,
    destination: sinkDestination(sink),
    messageId: `${sink}-${i}`,
    payload: {
      kind: 'publish',
      topic: null,
      message: {
        id: `${sink}-${i}`,
        type: 't',
        time: new Date(0).toISOString(),
        source: { run_id: runId, definition: 'd', version: 1 },
        data: i,
      },
    },
  }));
  await relays[0]!.context.store.transaction((tx) => tx.write({ ...emptyWriteSet(), outbox: rows }));
  return rows;
}

async function left(sink: string, status = 'pending'): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM weft.outbox WHERE destination = ${sinkDestination(sink)} AND status = ${status}`;
  return row!.n;
}

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('outbox relay', () => {
  it('two relays deliver each row once', async () => {
    const sink = counter('once', 15);
    const engines = [relay([sink]), relay([sink]), relay([sink]), relay([sink])];
    await put('once', 200);
    // Four relays on their own connections, each claiming batches as fast as it can.
    await Promise.all(
      engines.map(async (e) => {
        while ((await left('once')) > 0) await deliverBatch(e.context, sinkDestination('once'));
      }),
    );
    expect(sink.seen.size).toBe(200);
    expect([...sink.seen.values()].filter((n) => n !== 1)).toEqual([]);
  });

  it('the relay killed between delivery and mark redelivers, and the consumer sees the same id', async () => {
    const sink = counter('crash');
    const engine = relay([sink]);
    const [row] = await put('crash', 1);
    const disarm = armFault('relay.after-deliver', () => {
      throw new Error('killed after delivery, before the mark');
    });
    await expect(deliverBatch(engine.context, sinkDestination('crash'))).rejects.toThrow(/killed/);
    disarm();
    expect(sink.rows).toHaveLength(1);
    expect(await left('crash')).toBe(1); // not marked: still pending, backing off
    await eventually(async () =>
      (await deliverBatch(engine.context, sinkDestination('crash'))) > 0 ? true : undefined,
    );
    expect(sink.rows.map((r) => r.messageId)).toEqual([row!.messageId, row!.messageId]);
    expect(sink.rows.map((r) => (r.payload.kind === 'publish' ? r.payload.message.id : ''))).toEqual([
      row!.messageId,
      row!.messageId,
    ]);
    expect(await left('crash')).toBe(0);
  });

  it('an unregistered destination backs off and dead-letters, and replay delivers it', async () => {
    const engine = relay([]);
    const [row] = await put('late', 1);
    const destination = sinkDestination('late');
    const seen: { attempts: number; next: Date; error: string | null }[] = [];
    for (let i = 0; i < 3; i++) {
      await eventually(async () =>
        (await deliverBatch(engine.context, destination)) > 0 ? true : undefined,
      );
      const [state] = await db.sql<{ attempts: number; nextAttemptAt: Date; lastError: string | null }[]>`
        SELECT attempts, next_attempt_at, last_error FROM weft.outbox WHERE message_id = ${row!.messageId}`;
      seen.push({ attempts: state!.attempts, next: state!.nextAttemptAt, error: state!.lastError });
    }
    // Never marked delivered: each failure is counted and waits longer (exponential backoff) ...
    expect(seen.map((s) => s.attempts)).toEqual([1, 2, 3]);
    expect(seen[0]!.error).toMatch(/no destination "sink:late" is registered/);
    // ... and after the third (the limit here) the row is a dead letter, kept and listed.
    expect(await left('late', 'dead')).toBe(1);
    const dead = await engine.context.store.listDeadLetters({ namespace: 'default', limit: 10 });
    expect(dead.items.map((d) => d.messageId)).toContain(row!.messageId);
    expect(await deliverBatch(engine.context, destination)).toBe(0); // dead letters are not delivered
    // The sink is configured; an operator replays; the message goes out with its id.
    const sink = counter('late');
    engine.addDestination(sink);
    const replayed = await engine.context.store.transaction((tx) =>
      tx.replayDeadLetters({ namespace: 'default', destination }),
    );
    expect(replayed).toBe(1);
    await deliverBatch(engine.context, destination);
    expect(sink.rows.map((r) => r.messageId)).toEqual([row!.messageId]);
    expect(await left('late')).toBe(0);
    expect(await left('late', 'dead')).toBe(0);
  });

  it('an event whose decision rolls back is never published', async () => {
    const sink = counter('gated');
    const engine = relay([sink]);
    await engine.definitions.deploy(
      'default',
      'name: gated\nnodes:\n  - { id: e, kind: event, sink: gated }\n',
    );
    const disarm = armFault('pass.after-write', () => {
      throw new Error('crash before commit');
    });
    try {
      await expect(
        engine.runs.start({ namespace: 'default', definition: 'gated', input: {} }),
      ).rejects.toThrow(/crash before commit/);
    } finally {
      disarm();
    }
    await deliverBatch(engine.context, sinkDestination('gated'));
    expect(sink.rows).toEqual([]);
    expect(await left('gated')).toBe(0);
    // Committed, it is published.
    const run = await engine.runs.start({ namespace: 'default', definition: 'gated', input: {} });
    await deliverBatch(engine.context, sinkDestination('gated'));
    expect(sink.rows.map((r) => r.runId)).toEqual([run.id]);
  });

  it('one failing destination does not stall the others', async () => {
    const hanging: Destination = {
      name: sinkDestination('stuck'),
      timeoutMs: 3_000,
      deliver: () => new Promise(() => {}), // never answers
    };
    const good = counter('fine');
    const engine = new Engine({
      store: new PgStore(db.pool(4)),
      destinations: [hanging, good],
      config: { crossProcessWakeups: false, systemTasks: false, relayPollMs: 20, relayBackoffMs: 50 },
    });
    relays.push(engine);
    await put('stuck', 5);
    await engine.start();
    try {
      await new Promise((r) => setTimeout(r, 100)); // the stuck destination's batch is in flight
      const rows = await put('fine', 5);
      await eventually(async () => (good.seen.size === 5 ? true : undefined), 2_000, 'the good destination');
      expect([...good.seen.keys()].sort()).toEqual(rows.map((r) => r.messageId).sort());
      expect(await left('stuck')).toBe(5);
    } finally {
      await engine.stop();
    }
  });
});
