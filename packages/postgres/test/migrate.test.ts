import { randomBytes } from 'node:crypto';
import { connect, migrate, readMigrations, schemaVersion } from '@weft/postgres';
import { withDatabase } from '@weft/testing';
import { afterAll, describe, expect, it } from 'vitest';

const admin = () => connect(process.env.WEFT_TEST_ADMIN_URL!, { max: 1 });
const name = `${process.env.WEFT_TEST_PREFIX}_m${randomBytes(3).toString('hex')}`;
const gap = `${process.env.WEFT_TEST_PREFIX}_g${randomBytes(3).toString('hex')}`;

afterAll(async () => {
  const a = admin();
  await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await a.unsafe(`DROP DATABASE IF EXISTS ${gap} WITH (FORCE)`);
  await a.end();
});

describe('migrations', () => {
  it('apply once when run concurrently from several connections, and again changes nothing', async () => {
    const a = admin();
    await a.unsafe(`CREATE DATABASE ${name}`);
    await a.end();
    const url = withDatabase(process.env.WEFT_TEST_ADMIN_URL!, name);
    const pools = Array.from({ length: 4 }, () => connect(url, { max: 1 }));
    try {
      expect(await schemaVersion(pools[0]!)).toBe(0);
      const applied = await Promise.all(pools.map((p) => migrate(p)));
      const all = await readMigrations();
      // Each migration was applied by exactly one of the four.
      expect(
        applied
          .flat()
          .map((m) => m.id)
          .sort(),
      ).toEqual(all.map((m) => m.id));
      const again = await migrate(pools[0]!);
      expect(again).toEqual([]);
      expect(await schemaVersion(pools[0]!)).toBe(all.at(-1)!.id);
      const rows = await pools[0]!`SELECT id FROM weft.migrations ORDER BY id`;
      expect(rows.map((r) => r.id)).toEqual(all.map((m) => m.id));
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it('applies a missing lower-numbered migration to a database that has later ones', async () => {
    // A database migrated before 0030 (the outbox) was merged: everything else, 0040 onwards included.
    const a = admin();
    await a.unsafe(`CREATE DATABASE ${gap}`);
    await a.end();
    const sql = connect(withDatabase(process.env.WEFT_TEST_ADMIN_URL!, gap), { max: 1 });
    try {
      const all = await readMigrations();
      expect(all.map((m) => m.id)).toContain(30);
      expect(all.some((m) => m.id > 30)).toBe(true);
      await sql.unsafe(`CREATE SCHEMA weft; CREATE TABLE weft.migrations (
        id int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      for (const m of all.filter((m) => m.id !== 30)) {
        await sql.begin(async (tx) => {
          await tx.unsafe(m.sql);
          await tx`INSERT INTO weft.migrations (id, name) VALUES (${m.id}::int, ${m.name})`.execute();
        });
      }
      const before = await schemaVersion(sql);
      expect(before).toBe(all.at(-1)!.id);
      const applied = await migrate(sql);
      expect(applied.map((m) => m.id)).toEqual([30]);
      expect(await migrate(sql)).toEqual([]);
      const rows = await sql`SELECT id FROM weft.migrations ORDER BY id`;
      expect(rows.map((r) => r.id)).toEqual(all.map((m) => m.id));
      // What 0030 brings is there, next to what the later ones brought.
      const tables = await sql<{ t: string }[]>`
        SELECT table_name AS t FROM information_schema.tables
         WHERE table_schema = 'weft' AND table_name IN ('outbox', 'start_keys', 'limits', 'schedules')
         ORDER BY table_name`;
      expect(tables.map((r) => r.t)).toEqual(['limits', 'outbox', 'schedules', 'start_keys']);
      const columns = await sql<{ c: string }[]>`
        SELECT column_name AS c FROM information_schema.columns
         WHERE table_schema = 'weft' AND table_name = 'tasks' AND column_name = 'child_run_id'`;
      expect(columns).toHaveLength(1);
    } finally {
      await sql.end();
    }
  });
});
