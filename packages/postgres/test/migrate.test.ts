import { randomBytes } from 'node:crypto';
import { connect, migrate, readMigrations, schemaVersion } from '@weft/postgres';
import { withDatabase } from '@weft/testing';
import { afterAll, describe, expect, it } from 'vitest';

const admin = () => connect(process.env.WEFT_TEST_ADMIN_URL!, { max: 1 });
const name = `${process.env.WEFT_TEST_PREFIX}_m${randomBytes(3).toString('hex')}`;

afterAll(async () => {
  const a = admin();
  await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
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
});
