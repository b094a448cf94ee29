import { WeftError } from '@weft/core';
import { type Page, type RunFilter, type RunRecord, runIdRange } from '@weft/engine';
import type { Db } from '../db.js';
import { ATTRIBUTES_COLUMN, RUN_COLUMNS } from './runs.js';

/**
 * The columns of a listed run: a summary. Input and output are read only when asked for (`include`); left
 * out, PostgreSQL never reads them (nor their TOAST; a run's vars are never listed), so a page costs the same whatever the runs carry.
 */
function listColumns(include: RunFilter['include']): string {
  const wanted = new Set(include ?? []);
  return `${ATTRIBUTES_COLUMN}, ${RUN_COLUMNS}`
    .replace('r.vars,', "'{}'::jsonb AS vars,")
    .replace(
      'r.input, r.output,',
      `${wanted.has('input') ? 'r.input' : 'NULL::jsonb AS input'}, ${
        wanted.has('output') ? 'r.output' : 'NULL::jsonb AS output'
      },`,
    );
}

type Match = Omit<RunFilter, 'cursor' | 'limit'>;

/**
 * The filter's conditions on `r` (the runs table), only those the filter sets. Connections plan every
 * statement once, generically (`plan_cache_mode`, see connect.ts): a condition written for every filter
 * as `$1 IS NULL OR ...` would give all of them one plan, chosen without knowing which filters are set, and
 * a time range would be read by walking every newer run. Each combination of filters is therefore its own
 * statement, planned for what it filters on (tests: "first page, %s: reads about a page, not the table",
 * and "with a start-time filter, pages go by start time and cover every matching run once").
 * A run id prefix becomes an id range; an idempotency key the one run it started, read by key.
 */
function conditions(sql: Db, f: Match) {
  const range = f.runId === undefined ? null : runIdRange(f.runId);
  if (f.runId !== undefined && !range)
    throw new WeftError(
      'bad_request',
      `run_id ${JSON.stringify(f.runId)} is not a run id or the start of one`,
      400,
    );
  const parts = [sql`r.namespace = ${f.namespace}`];
  if (f.status !== undefined) parts.push(sql`r.status = ${f.status}`);
  if (f.definition !== undefined) parts.push(sql`r.definition_name = ${f.definition}`);
  if (f.version !== undefined) parts.push(sql`r.definition_version = ${f.version}::int`);
  if (f.startedBefore) parts.push(sql`r.created_at < ${f.startedBefore.toISOString()}::timestamptz`);
  if (f.startedAfter) parts.push(sql`r.created_at >= ${f.startedAfter.toISOString()}::timestamptz`);
  if (range) parts.push(sql`r.id BETWEEN ${range.from}::uuid AND ${range.to}::uuid`);
  // The attribute's runs come from index run_attributes_match, in run id order (decision 0157).
  if (f.attribute !== undefined)
    parts.push(sql`r.id IN (SELECT a.run_id FROM weft.run_attributes a WHERE a.namespace = ${f.namespace}
                             AND a.key = ${f.attribute.key} AND a.value #>> '{}' = ${f.attribute.value})`);
  if (f.idempotencyKey !== undefined)
    parts.push(sql`r.id = (SELECT k.run_id FROM weft.idempotency_keys k
                            WHERE k.namespace = ${f.namespace} AND k.key = ${f.idempotencyKey})`);
  return parts.reduce((all, part) => sql`${all} AND ${part}`);
}

/**
 * A page of runs, newest first; the cursor is the last run id of the page. Without a start-time filter
 * runs are read by id (ids are time-ordered, index `runs_by_namespace` and its siblings); with one, by
 * start time then id (index `runs_by_start`), and the cursor run's start time is read by its key.
 */
export async function listRuns(sql: Db, filter: RunFilter): Promise<Page<RunRecord>> {
  if (filter.cursor !== undefined && !/^[0-9a-f-]{36}$/i.test(filter.cursor))
    throw new WeftError('bad_cursor', `cursor ${JSON.stringify(filter.cursor)} is not one this API gave out`);
  const limit = filter.limit + 1;
  const where = conditions(sql, filter);
  const byTime = filter.startedBefore !== undefined || filter.startedAfter !== undefined;
  const cursor = filter.cursor;
  const columns = listColumns(filter.include);
  const after = !cursor
    ? sql``
    : byTime
      ? sql`AND (r.created_at, r.id) < (SELECT c.created_at, c.id FROM weft.runs c WHERE c.id = ${cursor}::uuid)`
      : sql`AND r.id < ${cursor}::uuid`;
  const rows = byTime
    ? await sql<RunRecord[]>`
        SELECT ${sql.unsafe(columns)} FROM weft.runs r WHERE ${where} ${after}
         ORDER BY r.created_at DESC, r.id DESC LIMIT ${limit}::int`.execute()
    : await sql<RunRecord[]>`
        SELECT ${sql.unsafe(columns)} FROM weft.runs r WHERE ${where} ${after}
         ORDER BY r.id DESC LIMIT ${limit}::int`.execute();
  const items = rows.slice(0, filter.limit);
  return { items, next: rows.length > filter.limit ? items[items.length - 1]!.id : null };
}

/** How many runs match, counting no further than `cap` (an operator's preview, not a statistic). */
export async function countMatchingRuns(sql: Db, filter: Match, cap: number): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM (SELECT 1 FROM weft.runs r WHERE ${conditions(sql, filter)} LIMIT ${cap}::int) x`.execute();
  return row?.n ?? 0;
}
