import { TERMINAL_RUN_STATUSES } from '@weft/core';
import type { Db } from '../db.js';

/**
 * Which of these runs have ended: one primary-key probe per id, for whoever awaits many runs and looks now
 * and then for an end whose notification was lost.
 */
export async function endedRuns(sql: Db, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    SELECT id::text FROM weft.runs
     WHERE id = ANY(${[...ids]}::uuid[]) AND status = ANY(${[...TERMINAL_RUN_STATUSES]}::text[])`.execute();
  return rows.map((r) => r.id);
}
