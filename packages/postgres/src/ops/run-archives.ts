import type { RunArchive } from '@weft/engine';
import type { Db } from '../db.js';

/**
 * The archive documents of runs the caller has locked: each run with every attempt and its whole history,
 * built by PostgreSQL in one statement. Payloads are as stored (blob references included); the caller
 * resolves them before writing the document.
 */
export async function readRunArchives(sql: Db, ids: readonly string[]): Promise<RunArchive[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{ doc: RunArchive }[]>`
    SELECT jsonb_build_object(
      'format', 'weft.run-archive/1',
      'archivedAt', to_jsonb(now()),
      'run', jsonb_build_object(
        'id', r.id, 'namespace', r.namespace, 'definition', r.definition_name, 'version', r.definition_version,
        'status', r.status, 'input', r.input, 'output', r.output, 'error', r.error,
        'created_at', to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'finished_at', to_char(r.finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'parent', CASE WHEN r.parent_run_id IS NULL THEN NULL ELSE jsonb_build_object(
          'run_id', r.parent_run_id, 'node_id', r.parent_node_id, 'iteration', r.parent_iteration,
          'attempt', r.parent_attempt, 'detached', r.detached) END),
      'tasks', COALESCE((SELECT jsonb_agg(jsonb_build_object(
          'id', t.id, 'node_id', t.node_id, 'iteration', t.iteration, 'attempt', t.attempt, 'status', t.status,
          'task_type', t.task_type, 'input', t.input, 'output', t.output, 'error', t.error, 'worker', t.worker,
          'created_at', to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'started_at', to_char(t.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'finished_at', to_char(t.finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'child_run_id', t.child_run_id)
          ORDER BY t.created_at, t.node_id, t.iteration, t.attempt)
        FROM weft.tasks t WHERE t.run_id = r.id), '[]'::jsonb),
      'history', COALESCE((SELECT jsonb_agg(jsonb_build_object(
          'seq', h.seq, 'type', h.type, 'node_id', h.node_id, 'iteration', h.iteration, 'attempt', h.attempt,
          'data', h.data, 'at', to_char(h.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) ORDER BY h.seq)
        FROM weft.history h WHERE h.run_id = r.id), '[]'::jsonb)) AS doc
      FROM weft.runs r WHERE r.id = ANY(${ids}::uuid[])`.execute();
  return rows.map((r) => r.doc);
}
