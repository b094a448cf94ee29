import { connect, migrate } from '@weft/postgres';

/**
 * Drops and creates the database `name` on the server of `baseUrl` and migrates it; returns its URL.
 * The name is the benchmark's own (an option or a constant), never a user's value.
 */
export async function freshDatabase(baseUrl: string, name: string): Promise<string> {
  const admin = connect(baseUrl, { max: 1 });
  try {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  const sql = connect(u.toString(), { max: 1 });
  try {
    await migrate(sql);
  } finally {
    await sql.end();
  }
  return u.toString();
}
