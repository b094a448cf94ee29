import type { AttributeRow } from '@weft/engine';
import type { Db } from '../db.js';
import { jsonText } from '../db.js';

/** Sets search attributes of runs the caller has locked: each replaces the run's attribute of its name. */
export async function setAttributes(sql: Db, rows: readonly AttributeRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    INSERT INTO weft.run_attributes AS a (run_id, namespace, key, value)
    SELECT DISTINCT ON (s.run_id, e.key) s.run_id, s.namespace, e.key, e.value
      FROM unnest(${rows.map((r) => r.runId)}::uuid[], ${rows.map((r) => r.namespace)}::text[],
                  ${rows.map((r) => jsonText(r.values) ?? '{}')}::text[]) WITH ORDINALITY AS s(run_id, namespace, attrs, ord),
           jsonb_each(s.attrs::jsonb) e
     ORDER BY s.run_id, e.key, s.ord DESC
    ON CONFLICT (run_id, key) DO UPDATE SET value = EXCLUDED.value`.execute();
}
