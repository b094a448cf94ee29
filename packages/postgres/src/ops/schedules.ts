import type { ScheduleFire, ScheduleRecord, ScheduleSpec } from '@weft/engine';
import type { Db } from '../db.js';
import { jsonText } from '../db.js';

const COLUMNS = `namespace, name, definition, version, cron, timezone, input, overlap, paused, next_at, buffered_at,
  last_at, last_run_id, last_outcome, created_at, updated_at`;

/** Creates or replaces a schedule (its history of fires is kept when replaced). */
export async function putSchedule(sql: Db, s: ScheduleSpec): Promise<ScheduleRecord> {
  const [row] = await sql<ScheduleRecord[]>`
    INSERT INTO weft.schedules AS s (namespace, name, definition, version, cron, timezone, input, overlap, paused, next_at)
    VALUES (${s.namespace}, ${s.name}, ${s.definition}, ${s.version}::int, ${s.cron}, ${s.timezone},
            ${jsonText(s.input) ?? '{}'}::text::jsonb, ${s.overlap}, ${s.paused}, ${s.nextAt?.toISOString() ?? null}::timestamptz)
    ON CONFLICT (namespace, name) DO UPDATE
       SET definition = EXCLUDED.definition, version = EXCLUDED.version, cron = EXCLUDED.cron,
           timezone = EXCLUDED.timezone, input = EXCLUDED.input, overlap = EXCLUDED.overlap,
           paused = EXCLUDED.paused, next_at = EXCLUDED.next_at, updated_at = now()
    RETURNING ${sql.unsafe(COLUMNS)}`.execute();
  return row!;
}

export async function deleteSchedule(sql: Db, namespace: string, name: string): Promise<boolean> {
  const rows =
    await sql`DELETE FROM weft.schedules WHERE namespace = ${namespace} AND name = ${name} RETURNING 1`.execute();
  return rows.length > 0;
}

export async function pauseSchedule(
  sql: Db,
  namespace: string,
  name: string,
  paused: boolean,
  nextAt: Date | null,
): Promise<ScheduleRecord | null> {
  const [row] = await sql<ScheduleRecord[]>`
    UPDATE weft.schedules SET paused = ${paused}, next_at = ${nextAt?.toISOString() ?? null}::timestamptz,
           buffered_at = CASE WHEN ${paused} THEN NULL ELSE buffered_at END, updated_at = now()
     WHERE namespace = ${namespace} AND name = ${name}
    RETURNING ${sql.unsafe(COLUMNS)}`.execute();
  return row ?? null;
}

export async function listSchedules(sql: Db, namespace: string): Promise<ScheduleRecord[]> {
  return sql<ScheduleRecord[]>`
    SELECT ${sql.unsafe(COLUMNS)} FROM weft.schedules WHERE namespace = ${namespace} ORDER BY name`.execute();
}

export async function getSchedule(sql: Db, namespace: string, name: string): Promise<ScheduleRecord | null> {
  const [row] = await sql<ScheduleRecord[]>`
    SELECT ${sql.unsafe(COLUMNS)} FROM weft.schedules WHERE namespace = ${namespace} AND name = ${name}`.execute();
  return row ?? null;
}

/** Schedules due now or holding a buffered start, across namespaces (advisory: no locks). */
export async function dueSchedules(sql: Db, limit: number): Promise<{ namespace: string; name: string }[]> {
  return sql<{ namespace: string; name: string }[]>`
    SELECT namespace, name FROM weft.schedules
     WHERE NOT paused AND (next_at <= now() OR buffered_at IS NOT NULL)
     ORDER BY next_at NULLS LAST LIMIT ${limit}::int`.execute();
}

/**
 * Locks a schedule that is still due (or holds a buffered start), skipping it when another replica holds
 * it: that replica is firing it now. The row lock lasts until the fire is recorded.
 */
export async function lockDueSchedule(
  sql: Db,
  namespace: string,
  name: string,
): Promise<ScheduleRecord | null> {
  const [row] = await sql<ScheduleRecord[]>`
    SELECT ${sql.unsafe(COLUMNS)} FROM weft.schedules
     WHERE namespace = ${namespace} AND name = ${name} AND NOT paused
       AND (next_at <= now() OR buffered_at IS NOT NULL)
       FOR UPDATE SKIP LOCKED`.execute();
  return row ?? null;
}

export async function recordScheduleFire(sql: Db, f: ScheduleFire): Promise<void> {
  await sql`
    UPDATE weft.schedules
       SET next_at = ${f.nextAt?.toISOString() ?? null}::timestamptz, buffered_at = ${f.bufferedAt?.toISOString() ?? null}::timestamptz,
           last_at = ${f.lastAt?.toISOString() ?? null}::timestamptz, last_run_id = ${f.lastRunId}::uuid,
           last_outcome = ${f.lastOutcome}
     WHERE namespace = ${f.namespace} AND name = ${f.name}`.execute();
}
