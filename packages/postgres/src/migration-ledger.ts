import { WeftError } from '@weft/core';
import type { Sql, TransactionSql } from 'postgres';
import { type Migration, migrationFile } from './migration-files.js';

/** A row of `weft.migrations`: a migration the database has applied. */
export interface AppliedMigration {
  readonly id: number;
  readonly name: string;
  readonly appliedAt: Date;
  /** sha256 of the file when it was applied; null for a row written before Weft recorded them. */
  readonly checksum: string | null;
}

/**
 * Creates the ledger of applied migrations when missing, with its `checksum` column (added to a ledger made
 * before checksums were recorded). It is the migrator's own table, not a numbered migration: the checksum
 * of every file must be recordable from the first one applied (decision 0146).
 */
export async function ensureLedger(tx: TransactionSql): Promise<void> {
  await tx`CREATE SCHEMA IF NOT EXISTS weft`.execute();
  await tx`CREATE TABLE IF NOT EXISTS weft.migrations (
    id int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), checksum text)`.execute();
  // Only when missing: ALTER TABLE takes its exclusive lock even when IF NOT EXISTS finds the column.
  if (!(await hasChecksumColumn(tx)))
    await tx`ALTER TABLE weft.migrations ADD COLUMN IF NOT EXISTS checksum text`.execute();
}

async function hasChecksumColumn(sql: Sql | TransactionSql): Promise<boolean> {
  const [column] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM information_schema.columns
    WHERE table_schema = 'weft' AND table_name = 'migrations' AND column_name = 'checksum'`.execute();
  return (column?.n ?? 0) > 0;
}

/**
 * The ledger's rows, or null when the database has none. Reads the checksum only where the column exists,
 * so a database last migrated by an earlier Weft is read without changing it (as `--no-migrate` and
 * `weft migrate status` must).
 */
export async function readLedger(sql: Sql | TransactionSql): Promise<AppliedMigration[] | null> {
  // Separate statements: a query naming weft.migrations fails to plan where the table does not exist.
  const [table] = await sql<
    { t: string | null }[]
  >`SELECT to_regclass('weft.migrations')::text AS t`.execute();
  if (!table?.t) return null;
  const rows = (await hasChecksumColumn(sql))
    ? await sql<{ id: number; name: string; applied_at: Date; checksum: string | null }[]>`
        SELECT id, name, applied_at, checksum FROM weft.migrations ORDER BY id`.execute()
    : await sql<{ id: number; name: string; applied_at: Date; checksum: null }[]>`
        SELECT id, name, applied_at, NULL::text AS checksum FROM weft.migrations ORDER BY id`.execute();
  return rows.map((r) => ({ id: r.id, name: r.name, appliedAt: r.applied_at, checksum: r.checksum }));
}

/**
 * Records the checksum of each applied migration that has none yet (rows written before Weft recorded
 * them), from the file this Weft ships under the same id. Runs under the migration lock, so concurrent
 * starts fill each row once with the same value; test: "fills the checksums of a ledger written before
 * they were recorded, from several connections at once".
 */
export async function fillChecksums(tx: TransactionSql, files: readonly Migration[]): Promise<void> {
  const ids = files.map((m) => m.id);
  const sums = files.map((m) => m.checksum);
  await tx`UPDATE weft.migrations m SET checksum = f.checksum
    FROM unnest(${ids}::int[], ${sums}::text[]) AS f(id, checksum)
    WHERE m.id = f.id AND m.checksum IS NULL`.execute();
}

/** An applied migration whose file is not what was applied. */
export interface ChangedMigration {
  readonly file: string;
  readonly recorded: string;
  readonly now: string;
}

/** The applied migrations whose shipped file's checksum differs from the one recorded when it was applied. */
export function changedMigrations(
  ledger: readonly AppliedMigration[],
  files: readonly Migration[],
): ChangedMigration[] {
  const byId = new Map(files.map((m) => [m.id, m]));
  return ledger.flatMap((row) => {
    const file = byId.get(row.id);
    if (!file || row.checksum === null || row.checksum === file.checksum) return [];
    return [{ file: migrationFile(file), recorded: row.checksum, now: file.checksum }];
  });
}

/** Refuses to go on when an applied migration's file has changed, naming each file and what to do. */
export function refuseChanged(changed: readonly ChangedMigration[]): void {
  if (changed.length === 0) return;
  const list = changed
    .map((c) => `${c.file} (applied with sha256 ${c.recorded.slice(0, 12)}…, now ${c.now.slice(0, 12)}…)`)
    .join(', ');
  throw new WeftError(
    'migration_changed',
    `migration file(s) changed after the database applied them: ${list}. Restore each file as it was when applied (from version control) and put the change in a new migration; the database was not changed`,
  );
}
