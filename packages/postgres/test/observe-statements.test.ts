import { connect } from '@weft/postgres';
import { createTestDatabase, type TestDatabase } from '@weft/testing';
import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A pool opened with `onStatement` reports every statement Weft's code sends (the server's
// weft_db_statements_total counts them), without the driver's per-statement debug hook.

let db: TestDatabase;
let sql: Sql;
let seen: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  sql = connect(db.url, { max: 2, onStatement: (q) => seen.push(q) });
});
afterAll(async () => {
  await sql?.end();
  await db?.drop();
});

describe('a pool that reports its statements', () => {
  it('reports each statement of the pool, its transactions, savepoints and reserved connections once', async () => {
    seen = [];
    const [one] = await sql<{ n: number }[]>`SELECT ${1}::int AS n`;
    await sql.unsafe('SELECT 2 AS n');
    await sql.begin(async (tx) => {
      await tx`SELECT ${3}::int AS n`;
      await tx.savepoint(async (sp) => {
        await sp`SELECT 4 AS n`;
      });
    });
    const conn = await sql.reserve();
    try {
      await conn`SELECT ${5}::int AS n, ${6}::int AS m`;
      await conn.unsafe('SELECT $1::int AS n', [7]);
    } finally {
      conn.release();
    }
    expect(one!.n).toBe(1);
    expect(seen).toEqual([
      'SELECT $1::int AS n',
      'SELECT 2 AS n',
      'SELECT $1::int AS n',
      'SELECT 4 AS n',
      'SELECT $1::int AS n, $2::int AS m',
      'SELECT $1::int AS n',
    ]);
  });

  it("a statement's values stay out of a failed statement's error", async () => {
    // A logger writes an error's enumerable properties: the statement's values (a run's input, a secret)
    // must not be among them.
    const failed = await sql`SELECT ${'the-secret-value'}::int`.then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(failed).toBeInstanceOf(Error);
    expect(Object.keys(failed!)).not.toContain('parameters');
    expect(JSON.stringify(failed)).not.toContain('the-secret-value');
    expect(JSON.stringify({ ...failed })).not.toContain('the-secret-value');
  });
});
