import type PgBoss from 'pg-boss';
import type { Sql } from 'postgres';

/**
 * pg-boss's database interface over a postgres.js connection: the handle PgStore's `runInTransaction`
 * hands out (its reserved connection, inside BEGIN … COMMIT). pg-boss's statements then run in Weft's
 * transaction, so a job commits or rolls back with the task it announces.
 *
 * Values go to postgres.js as they are: it asks the server for each parameter's type and encodes the
 * value for it (an object for a jsonb parameter as JSON, a Date as a timestamp).
 */
export function joinedDb(handle: unknown): PgBoss.Db {
  if (typeof (handle as { unsafe?: unknown })?.unsafe !== 'function')
    throw new TypeError(
      'the pg-boss dispatcher joins transactions of PgStore (a postgres.js connection); this store handed out something else — use a PgStore, or a dispatcher created with shareTransactions: false',
    );
  const sql = handle as Sql;
  return {
    async executeSql(text: string, values: unknown[] = []) {
      const rows = await sql.unsafe(text, values as never[]);
      return { rows: [...rows] };
    },
  };
}
