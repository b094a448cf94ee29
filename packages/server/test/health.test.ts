import { Engine } from '@weft/engine';
import { PgStore } from '@weft/postgres';
import { buildApp, READY_TIMEOUT_MS } from '@weft/server';
import { createTestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';
import { waitFor } from './restart-helpers.js';

// Liveness and readiness, without credentials: /livez and /healthz answer while the process serves;
// /readyz also needs the database to answer with every migration applied and the background loops running.
// A database that is down is covered by database-restart.test.ts.

describe('health routes', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('/livez and /healthz answer 200', async () => {
    expect(await t.call('GET', '/livez')).toEqual({ status: 200, body: { ok: true } });
    expect(await t.call('GET', '/healthz')).toEqual({ status: 200, body: { ok: true } });
  });

  it('/readyz answers 200 when the database answers with a current schema and the loops run', async () => {
    expect(await t.call('GET', '/readyz')).toEqual({ status: 200, body: { ok: true } });
  });

  it('/readyz answers 503 schema_outdated when a migration is missing, naming it', async () => {
    const [last] = await t.db.sql<{ id: number; name: string }[]>`
      SELECT id, name FROM weft.migrations ORDER BY id DESC LIMIT 1`;
    await t.db.sql`DELETE FROM weft.migrations WHERE id = ${last!.id}`;
    try {
      const r = await t.call('GET', '/readyz');
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe('schema_outdated');
      expect(r.body.error.message).toContain(last!.name);
      expect(r.body.error.message).toContain('weft migrate');
      expect((await t.call('GET', '/livez')).status).toBe(200);
    } finally {
      await t.db.sql`INSERT INTO weft.migrations (id, name) VALUES (${last!.id}, ${last!.name})`;
    }
    expect((await t.call('GET', '/readyz')).status).toBe(200);
  });

  it('/readyz answers 503 database_unavailable when the database does not answer within its timeout', async () => {
    // The ledger locked by another transaction: the readiness query waits on it, as on a database that hangs.
    let release!: () => void;
    let locked!: () => void;
    const held = new Promise<void>((r) => {
      locked = r;
    });
    const holder = t.db.sql.begin(async (tx) => {
      await tx`LOCK TABLE weft.migrations IN ACCESS EXCLUSIVE MODE`;
      locked();
      await new Promise<void>((r) => {
        release = r;
      });
    });
    await held;
    try {
      const r = await t.call('GET', '/readyz');
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe('database_unavailable');
      expect(r.body.error.message).toContain(`did not answer within ${READY_TIMEOUT_MS} ms`);
      expect((await t.call('GET', '/livez')).status).toBe(200);
    } finally {
      release();
      await holder;
    }
    await waitFor(
      '/readyz to answer 200',
      async () => (await t.call('GET', '/readyz')).status === 200,
      30_000,
    );
  });

  it('/readyz answers 503 background_stopped when a background loop has ended', async () => {
    // A loop ends only when reporting a failed round itself fails: here the logger throws and the rounds
    // fail because the engine's connection pool is closed.
    const db = await createTestDatabase();
    const sql = db.pool(2);
    const failing = {
      info: () => {},
      warn: () => {},
      error: () => {
        throw new Error('log sink gone');
      },
    };
    const engine = new Engine({ store: new PgStore(sql), logger: failing, config: { timerPollMs: 20 } });
    await engine.start();
    const app = buildApp({ engine, console: null, auth: { mode: 'off' } });
    try {
      await sql.end();
      await waitFor('a loop to end', () => engine.backgroundStatus().some((l) => !l.running), 30_000);
      const r = await app.inject({ method: 'GET', url: '/readyz' });
      expect(r.statusCode).toBe(503);
      expect(r.json().error.code).toBe('background_stopped');
      expect(r.json().error.message).toMatch(/restart the server/);
      expect((await app.inject({ method: 'GET', url: '/livez' })).statusCode).toBe(200);
    } finally {
      await app.close();
      await engine.stop();
      await db.drop();
    }
  });

  it('/readyz answers 503 background_stalled while a loop is stuck in one round, and 200 once it goes on', async () => {
    const db = await createTestDatabase();
    const engine = new Engine({ store: new PgStore(db.sql), config: { timerPollMs: 20 } });
    await engine.start();
    const app = buildApp({ engine, console: null, auth: { mode: 'off' }, backgroundStallMs: 300 });
    // The timer table locked by another transaction: the timer loop's round waits on it (SKIP LOCKED skips
    // rows, not a table lock), as on a query that hangs.
    let release!: () => void;
    let locked!: () => void;
    const held = new Promise<void>((r) => {
      locked = r;
    });
    const holder = db.pool(1).begin(async (tx) => {
      await tx`LOCK TABLE weft.timers IN ACCESS EXCLUSIVE MODE`;
      locked();
      await new Promise<void>((r) => {
        release = r;
      });
    });
    try {
      await held;
      let last: { statusCode: number; json(): any } | undefined;
      await waitFor(
        'readyz to say a loop is stuck',
        async () => {
          last = await app.inject({ method: 'GET', url: '/readyz' });
          // Other loops that read timers (the sweeper) may be named first.
          return last.statusCode === 503 && /timers/.test(last.json().error.message);
        },
        60_000,
      );
      expect(last!.json().error.code).toBe('background_stalled');
      expect(last!.json().error.message).toMatch(
        /^background loop\(s\) .*timers.* stuck in one round for over 300 ms/,
      );
      release();
      await holder;
      await waitFor(
        'readyz to answer 200',
        async () => (await app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200,
        60_000,
      );
    } finally {
      release?.();
      await holder.catch(() => {});
      await app.close();
      await engine.stop();
      await db.drop();
    }
  });
});
