import type { ForkLinks, RunFork } from '@weft/engine';
import type { Db } from '../db.js';

/** Records that a run (inserted by the same transaction) was forked from another. */
export async function recordFork(sql: Db, fork: RunFork): Promise<void> {
  await sql`INSERT INTO weft.run_forks (run_id, forked_from, up_to_node)
            VALUES (${fork.runId}::uuid, ${fork.forkedFrom}::uuid, ${fork.upToNode})`.execute();
}

/** A run's fork links, both ways: at most 1000 forks, oldest first (run ids are time-ordered). */
export async function forkLinks(sql: Db, runId: string): Promise<ForkLinks> {
  const [from, forks] = await Promise.all([
    sql<{ forkedFrom: string; upToNode: string | null }[]>`
      SELECT forked_from::text, up_to_node FROM weft.run_forks WHERE run_id = ${runId}::uuid`.execute(),
    sql<{ runId: string }[]>`
      SELECT run_id::text FROM weft.run_forks WHERE forked_from = ${runId}::uuid ORDER BY run_id LIMIT 1000`.execute(),
  ]);
  return {
    forkedFrom: from[0]?.forkedFrom ?? null,
    upToNode: from[0]?.upToNode ?? null,
    forks: forks.map((f) => f.runId),
  };
}
