import { readFile } from 'node:fs/promises';
import { definitionJsonSchema, formatProblem, parseDefinition } from '@weft/core';
import { CliError } from '../errors.js';
import { color, table } from '../output.js';

/** `weft validate FILE`: checks a definition offline; exit 1 with every problem listed. */
export async function validateCommand(file: string): Promise<void> {
  const source = await readSource(file);
  const parsed = parseDefinition(source);
  if (!parsed.ok) {
    const lines = parsed.error.map((p) => `  ${file}: ${formatProblem(p)}`);
    throw new CliError(`${file} has ${parsed.error.length} problem(s):\n${lines.join('\n')}`);
  }
  const d = parsed.value;
  console.log(`${color.green('valid')}: ${d.name} (${d.nodes.length} nodes, ${d.edges.length} edges)`);
}

/** `weft schema`: prints the JSON Schema of definition files. */
export function schemaCommand(): void {
  console.log(JSON.stringify(definitionJsonSchema(), null, 2));
}

/** `weft migrate`: applies pending migrations to DATABASE_URL. */
export async function migrateCommand(databaseUrl: string | undefined): Promise<void> {
  if (!databaseUrl)
    throw new CliError('set DATABASE_URL or pass --database-url to say which PostgreSQL to migrate');
  // Loaded here: the commands that share this file (validate, and deploy's file reading) do not need it.
  const { connect, migrate } = await import('@weft/postgres');
  const sql = connect(databaseUrl, { max: 1 });
  try {
    const applied = await migrate(sql, (m) =>
      console.log(`applied ${String(m.id).padStart(4, '0')}_${m.name}`),
    );
    if (applied.length === 0) console.log('the schema is up to date');
  } finally {
    await sql.end();
  }
}

/** `weft migrate status`: every migration shipped or applied, and where it stands; exit 1 when one changed. */
export async function migrateStatusCommand(databaseUrl: string | undefined, json: boolean): Promise<void> {
  if (!databaseUrl)
    throw new CliError('set DATABASE_URL or pass --database-url to say which PostgreSQL to look at');
  const { connect, migrationStatus } = await import('@weft/postgres');
  const sql = connect(databaseUrl, { max: 1 });
  let states: Awaited<ReturnType<typeof migrationStatus>>;
  try {
    states = await migrationStatus(sql);
  } finally {
    await sql.end();
  }
  if (json) {
    const rows = states.map((s) => ({
      id: s.id,
      file: s.file,
      state: s.state,
      applied_at: s.appliedAt?.toISOString() ?? null,
    }));
    console.log(JSON.stringify(rows, null, 2));
  } else {
    console.log(
      table(
        ['ID', 'FILE', 'STATE', 'APPLIED AT'],
        states.map((s) => [String(s.id).padStart(4, '0'), s.file, s.state, s.appliedAt?.toISOString() ?? '']),
      ),
    );
    const pending = states.filter((s) => s.state === 'pending').length;
    console.log(pending > 0 ? `${pending} pending: run \`weft migrate\`` : 'the schema is up to date');
  }
  const changed = states.filter((s) => s.state === 'changed');
  if (changed.length > 0)
    throw new CliError(
      `${changed.map((s) => s.file).join(', ')} changed after the database applied it: restore the file as it was (from version control) and put the change in a new migration`,
    );
}

/** Reads a file, with a clear error when it cannot be read. */
export async function readSource(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    throw new CliError(
      `cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
    );
  }
}
