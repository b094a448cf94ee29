import type { RetentionPolicy } from '@weft/engine';
import type { Db } from '../db.js';

type Row = { namespace: string; definitionName: string; keepMs: string; archive: boolean; updatedAt: Date };

function policyOf(r: Row): RetentionPolicy {
  return {
    namespace: r.namespace,
    definition: r.definitionName === '' ? null : r.definitionName,
    keepMs: Number(r.keepMs),
    archive: r.archive,
    updatedAt: r.updatedAt,
  };
}

/** Retention policies of a namespace (or of every namespace), the namespace's own first. */
export async function listPolicies(sql: Db, namespace?: string): Promise<RetentionPolicy[]> {
  const rows = await sql<Row[]>`
    SELECT namespace, definition_name, keep_ms::text AS keep_ms, archive, updated_at FROM weft.retention
     WHERE ${namespace === undefined ? sql`true` : sql`namespace = ${namespace}`}
     ORDER BY namespace, definition_name`.execute();
  return rows.map(policyOf);
}

/** Creates or replaces a policy; the namespace's own is stored with the definition name ''. */
export async function putPolicy(sql: Db, p: Omit<RetentionPolicy, 'updatedAt'>): Promise<RetentionPolicy> {
  const [row] = await sql<Row[]>`
    INSERT INTO weft.retention (namespace, definition_name, keep_ms, archive)
    VALUES (${p.namespace}, ${p.definition ?? ''}, ${p.keepMs}::bigint, ${p.archive})
    ON CONFLICT (namespace, definition_name) DO UPDATE
       SET keep_ms = EXCLUDED.keep_ms, archive = EXCLUDED.archive, updated_at = now()
    RETURNING namespace, definition_name, keep_ms::text AS keep_ms, archive, updated_at`.execute();
  return policyOf(row!);
}

/** Deletes a policy; false when there was none. */
export async function deletePolicy(sql: Db, namespace: string, definition: string | null): Promise<boolean> {
  const rows = await sql`
    DELETE FROM weft.retention WHERE namespace = ${namespace} AND definition_name = ${definition ?? ''}
    RETURNING 1`.execute();
  return rows.length > 0;
}
