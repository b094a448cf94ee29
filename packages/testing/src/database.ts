import { randomBytes } from 'node:crypto';
import { connect, PgStore } from '@weft/postgres';
import type { Sql } from 'postgres';
import { withDatabase } from './global-setup.js';

/** A database of its own for one test file: a copy of the migrated template. */
export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  /** A pool on the database (10 connections). */
  readonly sql: Sql;
  /** Opens another pool: separate connections, for tests of real concurrency. */
  pool(max?: number): Sql;
  /** Closes every pool and drops the database. */
  drop(): Promise<void>;
}

/** Creates a fresh, migrated database for the calling test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env.WEFT_TEST_ADMIN_URL;
  const template = process.env.WEFT_TEST_TEMPLATE;
  const prefix = process.env.WEFT_TEST_PREFIX;
  if (!adminUrl || !template || !prefix) {
    throw new Error(
      'the test database is not set up: run tests through vitest (its global setup starts PostgreSQL)',
    );
  }
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = connect(adminUrl, { max: 1 });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        break;
      } catch (e) {
        // Two files copying the template at the same instant: PostgreSQL refuses one; try again.
        if (attempt >= 20 || !/being accessed by other users/.test(String(e))) throw e;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      }
    }
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const pools: Sql[] = [];
  const pool = (max = 10) => {
    const sql = connect(url, { max, applicationName: 'weft-test' });
    pools.push(sql);
    return sql;
  };
  const sql = pool();
  return {
    url,
    name,
    sql,
    pool,
    async drop() {
      await Promise.all(pools.map((p) => p.end({ timeout: 5 })));
      const a = connect(adminUrl, { max: 1 });
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}

/** A PgStore on its own pool of the test database. */
export function testStore(db: TestDatabase, max = 10): PgStore {
  return new PgStore(db.pool(max));
}
