import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { readMigrations } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// `weft migrate status` lists every migration and where it stands; `weft migrate`, `weft migrate status`
// and `weft server --no-migrate` refuse a database whose applied migration file has changed, naming it.

const BIN = fileURLToPath(new URL('../bin/weft.js', import.meta.url));
const run = promisify(execFile);

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Runs the CLI; resolves with its exit code and output whatever the code. */
async function weft(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' },
      timeout: 90_000,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const f = e as { code: number; stdout: string; stderr: string };
    return { code: f.code, stdout: f.stdout, stderr: f.stderr };
  }
}

describe('weft migrate status', { timeout: 180_000 }, () => {
  it('lists every migration as applied, as a table and as JSON', async () => {
    expect((await weft(['migrate', '--database-url', db.url])).code).toBe(0);
    const files = await readMigrations();
    const json = await weft(['migrate', 'status', '--database-url', db.url, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const rows = JSON.parse(json.stdout) as { id: number; file: string; state: string; applied_at: string }[];
    expect(rows.map((r) => [r.id, r.state])).toEqual(files.map((m) => [m.id, 'applied']));
    expect(rows[0]!.file).toBe(`${String(files[0]!.id).padStart(4, '0')}_${files[0]!.name}.sql`);
    expect(new Date(rows[0]!.applied_at).getTime()).not.toBeNaN();
    const text = await weft(['migrate', 'status', '--database-url', db.url]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ID\s+FILE\s+STATE\s+APPLIED AT$/m);
    expect(text.stdout).toContain('the schema is up to date');
  });

  it('a changed applied file: migrate, status and a server without migrating refuse, naming it', async () => {
    const first = (await readMigrations())[0]!;
    const file = `${String(first.id).padStart(4, '0')}_${first.name}.sql`;
    await db.sql`UPDATE weft.migrations SET checksum = ${'0'.repeat(64)} WHERE id = ${first.id}::int`;
    try {
      for (const args of [
        ['migrate', '--database-url', db.url],
        ['server', '--database-url', db.url, '--port', '0', '--no-migrate', '--log-level', 'silent'],
      ]) {
        const r = await weft(args);
        expect(r.code, `${args[0]}: ${r.stderr}`).toBe(1);
        const lines = r.stderr.trim().split('\n');
        expect(lines.at(-1)).toMatch(
          new RegExp(`^error: migration file\\(s\\) changed .*${file}.*new migration`),
        );
      }
      const status = await weft(['migrate', 'status', '--database-url', db.url]);
      expect(status.code).toBe(1);
      expect(status.stdout).toMatch(new RegExp(`${file}\\s+changed`));
      expect(status.stderr).toContain(`${file} changed after the database applied it`);
    } finally {
      await db.sql`UPDATE weft.migrations SET checksum = ${first.checksum} WHERE id = ${first.id}::int`;
    }
  });
});
