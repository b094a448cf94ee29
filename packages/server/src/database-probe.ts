import { type PgStore, pendingMigrations } from '@weft/postgres';
import type { DatabaseCheck } from './health.js';

/**
 * The readiness check of a server's database: it answers, and it has every migration this version of Weft
 * ships. A connection error is `database_unavailable`; missing migrations are `schema_outdated`.
 */
export function databaseProbe(sql: PgStore['sql']): () => Promise<DatabaseCheck> {
  return async () => {
    let pending: Awaited<ReturnType<typeof pendingMigrations>>;
    try {
      pending = await pendingMigrations(sql);
    } catch (e) {
      return {
        ok: false,
        code: 'database_unavailable',
        message: `PostgreSQL cannot be reached (${(e as Error).message}); check that it is running (Weft reconnects by itself once it is)`,
      };
    }
    if (pending.length === 0) return { ok: true };
    return {
      ok: false,
      code: 'schema_outdated',
      message: `the database lacks ${pending.length} migration(s) (first: ${pending[0]!.id} ${pending[0]!.name}); run \`weft migrate\``,
    };
  };
}
