import { WeftError } from '@weft/core';
import { checkMigrations, migrate, migrationStatus, readMigrations } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Each applied migration's sha256 is recorded; a database whose applied file has changed since is refused by
// `migrate` (changing nothing) and by a start without migrating, and `migrationStatus` says where each stands.

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** The error `run` throws (fails when it throws none). */
async function refusal(run: () => Promise<unknown>): Promise<WeftError> {
  const error = await run().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WeftError);
  return error as WeftError;
}

describe('migration checksums', () => {
  it('fills the checksums of a ledger written before they were recorded, from several connections at once', async () => {
    await migrate(db.sql);
    // The ledger as an earlier Weft left it: no checksum column.
    await db.sql`ALTER TABLE weft.migrations DROP COLUMN checksum`;
    expect((await migrationStatus(db.sql)).every((s) => s.state === 'unrecorded')).toBe(true);
    const pools = Array.from({ length: 4 }, () => db.pool(1));
    try {
      const applied = await Promise.all(pools.map((p) => migrate(p)));
      expect(applied.flat()).toEqual([]);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
    const files = await readMigrations();
    const rows = await db.sql<{ id: number; checksum: string }[]>`
      SELECT id, checksum FROM weft.migrations ORDER BY id`;
    expect(rows).toEqual(files.map((m) => ({ id: m.id, checksum: m.checksum })));
    expect((await migrationStatus(db.sql)).map((s) => s.state)).toEqual(files.map(() => 'applied'));
  });

  it('refuses to migrate, changing nothing, and to start without migrating when an applied file has changed', async () => {
    await migrate(db.sql);
    const files = await readMigrations();
    const first = files[0]!;
    const last = files.at(-1)!;
    const [saved] = await db.sql<{ checksum: string }[]>`
      SELECT checksum FROM weft.migrations WHERE id = ${first.id}::int`;
    // As if the first file had been edited after it was applied, and the last were not applied yet.
    await db.sql`UPDATE weft.migrations SET checksum = ${'0'.repeat(64)} WHERE id = ${first.id}::int`;
    await db.sql`DELETE FROM weft.migrations WHERE id = ${last.id}::int`;
    try {
      const refused = await refusal(() => migrate(db.sql));
      expect(refused.code).toBe('migration_changed');
      expect(refused.message).toContain(`${String(first.id).padStart(4, '0')}_${first.name}.sql`);
      expect(refused.message).toContain('new migration');
      // Nothing was applied: the last migration is still missing from the ledger.
      const [row] = await db.sql`SELECT 1 FROM weft.migrations WHERE id = ${last.id}::int`;
      expect(row).toBeUndefined();
      expect((await refusal(() => checkMigrations(db.sql))).code).toBe('migration_changed');
      const states = await migrationStatus(db.sql);
      expect(states.find((s) => s.id === first.id)?.state).toBe('changed');
      expect(states.find((s) => s.id === last.id)?.state).toBe('pending');
    } finally {
      await db.sql`UPDATE weft.migrations SET checksum = ${saved!.checksum} WHERE id = ${first.id}::int`;
      await db.sql`INSERT INTO weft.migrations (id, name, checksum)
        VALUES (${last.id}::int, ${last.name}, ${last.checksum})`;
    }
    await checkMigrations(db.sql);
  });

  it('lists a migration this Weft does not ship as unknown, and does not refuse it', async () => {
    await migrate(db.sql);
    await db.sql`INSERT INTO weft.migrations (id, name, checksum) VALUES (9999, 'from_a_newer_weft', 'abc')`;
    try {
      const states = await migrationStatus(db.sql);
      expect(states.at(-1)).toMatchObject({ id: 9999, file: '9999_from_a_newer_weft.sql', state: 'unknown' });
      await checkMigrations(db.sql);
      expect(await migrate(db.sql)).toEqual([]);
    } finally {
      await db.sql`DELETE FROM weft.migrations WHERE id = 9999`;
    }
  });
});
