import type { Sql } from 'postgres';
import { type Migration, migrationFile, readMigrations } from './migration-files.js';
import {
  type AppliedMigration,
  changedMigrations,
  ensureLedger,
  fillChecksums,
  readLedger,
  refuseChanged,
} from './migration-ledger.js';

// Any constant works; this one is "weft" in ASCII. Every migrating process takes it for the length of
// one migration's transaction, so concurrent `weft migrate` calls apply each file exactly once.
const MIGRATION_LOCK = 0x77656674;

/**
 * Applies pending migrations, each in its own transaction. Safe to run twice and from several processes
 * at once: each transaction takes an advisory lock and re-checks what is applied before running a file.
 * A file counts as applied by its own id, never by comparison with the highest one applied: a migration
 * numbered below one a database already has (work merged from a branch developed alongside, such as 0030
 * after 0040-0044) is still applied, in number order with the other pending ones (test: "applies a
 * missing lower-numbered migration to a database that has later ones"). Before anything is applied it
 * records the checksums the ledger lacks and refuses, changing nothing, when an applied file has changed
 * since (WeftError `migration_changed`). Returns the migrations it applied.
 */
export async function migrate(sql: Sql, onApplied?: (m: Migration) => void): Promise<Migration[]> {
  const migrations = await readMigrations();
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK}::bigint)`.execute();
    await ensureLedger(tx);
    await fillChecksums(tx, migrations);
    refuseChanged(changedMigrations((await readLedger(tx)) ?? [], migrations));
  });
  const applied: Migration[] = [];
  for (const migration of migrations) {
    const ran = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK}::bigint)`.execute();
      const done = await tx`SELECT 1 FROM weft.migrations WHERE id = ${migration.id}::int`.execute();
      if (done.length > 0) return false;
      await tx.unsafe(migration.sql);
      await tx`INSERT INTO weft.migrations (id, name, checksum)
        VALUES (${migration.id}::int, ${migration.name}, ${migration.checksum})`.execute();
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
 * Refuses a database where an applied migration's file has changed since (WeftError `migration_changed`),
 * reading only: for a server started without migrating.
 */
export async function checkMigrations(sql: Sql): Promise<void> {
  refuseChanged(changedMigrations((await readLedger(sql)) ?? [], await readMigrations()));
}

/**
 * The highest migration id the database has, or 0 for a fresh database. Not a completeness check: a
 * database may lack a lower-numbered migration (see `migrate`), which only `migrate` looks for.
 */
export async function schemaVersion(sql: Sql): Promise<number> {
  const ledger = await readLedger(sql);
  return ledger?.reduce((max, m) => Math.max(max, m.id), 0) ?? 0;
}

/**
 * The migrations this package ships that the database has not applied (all of them for a fresh database):
 * empty when the schema is current.
 */
export async function pendingMigrations(sql: Sql): Promise<Migration[]> {
  const migrations = await readMigrations();
  const applied = new Set((await readLedger(sql))?.map((r) => r.id));
  return migrations.filter((m) => !applied.has(m.id));
}

/** Where a migration stands in a database. */
export interface MigrationState {
  readonly id: number;
  /** The file name, such as `0042_human_tasks.sql`. */
  readonly file: string;
  /**
   * `applied`; `pending` (shipped, not applied); `changed` (applied, and the file differs from what was
   * applied); `unrecorded` (applied before checksums were recorded: `weft migrate` records it); `unknown`
   * (applied, but this version of Weft ships no such file: a newer Weft or another branch applied it).
   */
  readonly state: 'applied' | 'pending' | 'changed' | 'unrecorded' | 'unknown';
  readonly appliedAt: Date | null;
}

/** Every migration shipped or applied, in id order, with its state; reads only. */
export async function migrationStatus(sql: Sql): Promise<MigrationState[]> {
  const files = await readMigrations();
  const ledger = new Map<number, AppliedMigration>((await readLedger(sql))?.map((r) => [r.id, r]));
  const changed = new Set(changedMigrations([...ledger.values()], files).map((c) => c.file));
  const states: MigrationState[] = files.map((m) => {
    const row = ledger.get(m.id);
    const file = migrationFile(m);
    if (!row) return { id: m.id, file, state: 'pending', appliedAt: null };
    const state = changed.has(file) ? 'changed' : row.checksum === null ? 'unrecorded' : 'applied';
    return { id: m.id, file, state, appliedAt: row.appliedAt };
  });
  const shipped = new Set(files.map((m) => m.id));
  for (const row of ledger.values())
    if (!shipped.has(row.id))
      states.push({ id: row.id, file: migrationFile(row), state: 'unknown', appliedAt: row.appliedAt });
  return states.sort((a, b) => a.id - b.id);
}
