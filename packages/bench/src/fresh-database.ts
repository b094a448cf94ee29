import { connect, migrate } from '@weft/postgres';

/**
 * Drops and creates the database `name` on the server of `baseUrl` and migrates it; returns its URL.
 * The name is the benchmark's own (an option or a constant), never a user's value.
 */
export async function freshDatabase(baseUrl: string, name: string): Promise<string> {
  const url = await emptyDatabase(baseUrl, name);
  const sql = connect(url, { max: 1 });
  try {
    await migrate(sql);
  } finally {
    await sql.end();
  }
  return url;
}

/** Drops and creates the database `name` (the benchmark's own) on the server of `baseUrl`; returns its URL. */
export async function emptyDatabase(baseUrl: string, name: string): Promise<string> {
  await onServer(baseUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`, `CREATE DATABASE ${name}`);
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Drops the database `name` (the benchmark's own) once it has been measured: left behind, its dead rows
 * would be vacuumed while the next contender or phase is being measured.
 */
export async function dropDatabase(baseUrl: string, name: string): Promise<void> {
  await onServer(baseUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/** Runs the benchmark's own statements, in order, on one connection to the server of `baseUrl`. */
async function onServer(baseUrl: string, ...statements: string[]): Promise<void> {
  const admin = connect(baseUrl, { max: 1 });
  try {
    for (const statement of statements) await admin.unsafe(statement);
  } finally {
    await admin.end();
  }
}
