import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** The folder holding the numbered SQL migrations shipped with this package. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));

/** A migration file: `0001_init.sql` has id 1 and name `init`. */
export interface Migration {
  readonly id: number;
  readonly name: string;
  readonly sql: string;
  /** sha256 of the file's bytes, hex: recorded when applied, compared at every start. */
  readonly checksum: string;
}

/** The file name of a migration, such as `0042_human_tasks.sql`. */
export function migrationFile(m: { id: number; name: string }): string {
  return `${String(m.id).padStart(4, '0')}_${m.name}.sql`;
}

/** Reads the migration files in order, whatever their numbers (no list of them is kept anywhere else). */
export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => {
      const bytes = await readFile(`${dir}${file}`);
      return {
        id: Number(file.slice(0, 4)),
        name: file.slice(5, -4),
        sql: bytes.toString('utf8'),
        checksum: createHash('sha256').update(bytes).digest('hex'),
      };
    }),
  );
}
