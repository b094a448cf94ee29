import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Sql } from 'postgres';

/** The folder holding the numbered SQL migrations shipped with this package. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));

/** A migration file: `0001_init.sql` has id 1 and name `init`. */
export interface Migration {
  readonly id: number;
  readonly name: string;
  readonly sql: string;
}

/** Reads the migration files in order. */
export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => ({
      id: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: await readFile(`${dir}${file}`, 'utf8'),
    })),
  );
}

// Any constant works; this one is "weft" in ASCII. Every migrating process takes it for the length of
// one migration's transaction, so concurrent `weft migrate` calls apply each file exactly once.
const MIGRATION_LOCK = 0x77656674;

/**
 * Applies pending migrations, each in its own transaction. Safe to run twice and from several processes
 * at once: each transaction takes an advisory lock and re-checks what is applied before running a file.
 * A file counts as applied by its own id, never by comparison with the highest one applied: a migration
 * numbered below one a database already has (work merged from a branch developed alongside, such as 0030
 * after 0040-0044) is still applied, in number order with the other pending ones (test: "applies a
 * missing lower-numbered migration to a database that has later ones"). Returns the migrations it applied.
 */
export async function migrate(sql: Sql, onApplied?: (m: Migration) => void): Promise<Migration[]> {
  const migrations = await readMigrations();
  const applied: Migration[] = [];
  for (const migration of migrations) {
    const ran = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK}::bigint)`.execute();
      await tx`CREATE SCHEMA IF NOT EXISTS weft`.execute();
      await tx`CREATE TABLE IF NOT EXISTS weft.migrations (
        id int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`.execute();
      const done = await tx`SELECT 1 FROM weft.migrations WHERE id = ${migration.id}::int`.execute();
      if (done.length > 0) return false;
      await tx.unsafe(migration.sql);
      await tx`INSERT INTO weft.migrations (id, name) VALUES (${migration.id}::int, ${migration.name})`.execute();
      return true;
    });
    if (ran) {
      applied.push(migration);
      onApplied?.(migration);
    }
  }
  return applied;
}

/**
 * The highest migration id the database has, or 0 for a fresh database. Not a completeness check: a
 * database may lack a lower-numbered migration (see `migrate`), which only `migrate` looks for.
 */
export async function schemaVersion(sql: Sql): Promise<number> {
  // Two statements: a query naming weft.migrations fails to plan where the table does not exist yet.
  const [exists] = await sql<
    { t: string | null }[]
  >`SELECT to_regclass('weft.migrations')::text AS t`.execute();
  if (!exists?.t) return 0;
  const [row] = await sql<{ v: number }[]>`SELECT coalesce(max(id), 0) AS v FROM weft.migrations`.execute();
  return row?.v ?? 0;
}

/**
 * The migrations this package ships that the database has not applied (all of them for a fresh database):
 * empty when the schema is current.
 */
export async function pendingMigrations(sql: Sql): Promise<Migration[]> {
  const migrations = await readMigrations();
  const [exists] = await sql<
    { t: string | null }[]
  >`SELECT to_regclass('weft.migrations')::text AS t`.execute();
  if (!exists?.t) return migrations;
  const rows = await sql<{ id: number }[]>`SELECT id FROM weft.migrations`.execute();
  const applied = new Set(rows.map((r) => r.id));
  return migrations.filter((m) => !applied.has(m.id));
}
