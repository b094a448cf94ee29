// Shared setup of the in-process probes (micro*.ts): an engine on a fresh database, no HTTP, no workers.
import { Engine, type LeasedTask, type TaskReport } from '@weft/engine';
import { connect, PgStore } from '@weft/postgres';
import { freshDatabase } from './fresh-database.js';

/**
 * The probes' database: `weft_micro`, or `WEFT_MICRO_DB` (letters, digits and underscores) so that probes
 * run at once on one PostgreSQL server do not drop each other's database.
 */
function microDatabase(): string {
  const name = process.env.WEFT_MICRO_DB ?? 'weft_micro';
  if (!/^[a-z_][a-z0-9_]*$/.test(name))
    throw new Error(
      `WEFT_MICRO_DB is "${name}": use lower-case letters, digits and underscores (weft_micro_2)`,
    );
  return name;
}

/** An engine on a fresh, migrated probe database (see microDatabase) of the server at `url`, started. */
export async function microEngine(url: string, poolMax: number) {
  const sql = connect(await freshDatabase(url, microDatabase()), { max: poolMax });
  const engine = new Engine({ store: new PgStore(sql), config: { crossProcessWakeups: false } });
  await engine.start();
  return {
    engine,
    async close() {
      await engine.stop();
      await sql.end();
    },
  };
}

/** Reports for leased tasks, each completed with no output. */
export function completed(tasks: readonly LeasedTask[]): TaskReport[] {
  return tasks.map((t) => ({
    runId: t.runId,
    taskId: t.id,
    attempt: t.attempt,
    leaseToken: t.leaseToken,
    nodeId: t.nodeId,
    iteration: t.iteration,
    outcome: { kind: 'completed' as const, output: null },
  }));
}
