import { PgStore } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Weft's transactions turn sequential scans off, which prices a plan with a disabled scan at 10^10 and
// puts it over any JIT threshold. On a server with JIT (most packaged PostgreSQL builds), a statement
// such as the lease of a task by id was compiled on every execution: 0.5 to 1.5 s each, for a plan that
// runs in a millisecond. Weft's connections turn JIT off.

let db: TestDatabase;

/**
 * The EXPLAIN ANALYZE of an expensive-looking plan (a disabled scan), in a transaction of `sql`; with
 * `jit`, that transaction turns JIT back on.
 */
async function explained(sql: Sql, jit = false): Promise<Record<string, unknown>> {
  return sql.begin(async (tx) => {
    await tx`SELECT set_config('enable_seqscan', 'off', true)`;
    if (jit) await tx`SELECT set_config('jit', 'on', true)`;
    const [row] = await tx.unsafe(
      'EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM weft.queue WHERE task_type = $1',
      ['x'],
    );
    const plan = Object.values(row!)[0] as Record<string, unknown>[];
    return plan[0]!;
  });
}

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('connection settings', () => {
  it('statements are never compiled', async () => {
    const [setting] = await db.sql<{ jit: string }[]>`SHOW jit`;
    expect(setting!.jit).toBe('off');
    const weft = await explained(db.sql);
    expect(weft.Plan).toBeDefined();
    expect(weft.JIT).toBeUndefined();

    // Where the server can compile, the same plan is compiled once JIT is on again: the check above sees
    // JIT when there is any (servers built without it, like the embedded one, have none to see).
    const [server] = await db.sql<{ available: boolean }[]>`SELECT pg_jit_available() AS available`;
    if (server!.available) expect((await explained(db.sql, true)).JIT).toBeDefined();
  });

  it("a database's own defaults do not change what Weft's connections see", async () => {
    await db.sql.unsafe(`ALTER DATABASE ${db.name} SET default_transaction_isolation = 'repeatable read'`);
    await db.sql.unsafe(`ALTER DATABASE ${db.name} SET datestyle = 'SQL, DMY'`);
    try {
      // The database's defaults are set (sessions opened from now on get them, unless they say otherwise)...
      const [row] = await db.sql<{ settings: string[] }[]>`
        SELECT s.setconfig AS settings FROM pg_db_role_setting s
          JOIN pg_database d ON d.oid = s.setdatabase WHERE d.datname = current_database() AND s.setrole = 0`;
      expect(row!.settings).toEqual(
        expect.arrayContaining(['default_transaction_isolation=repeatable read', 'DateStyle=SQL, DMY']),
      );
      // ...and a Weft connection opened now still reads committed, and reads times right.
      const store = new PgStore(db.pool(1));
      const seen = await store.runInTransaction(async ({ handle }) => {
        const [r] = await (handle as Sql)<{ level: string; at: Date }[]>`
          SELECT current_setting('transaction_isolation') AS level,
                 '2026-01-02 03:04:05.678+00'::timestamptz AS at`;
        return r!;
      });
      expect(seen.level).toBe('read committed');
      expect(seen.at.toISOString()).toBe('2026-01-02T03:04:05.678Z');
    } finally {
      await db.sql.unsafe(`ALTER DATABASE ${db.name} RESET default_transaction_isolation`);
      await db.sql.unsafe(`ALTER DATABASE ${db.name} RESET datestyle`);
    }
  });
});
