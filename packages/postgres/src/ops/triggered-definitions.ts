import type { Definition } from '@weft/core';
import type { DefinitionRecord } from '@weft/engine';
import type { Db } from '../db.js';

interface DefinitionRow {
  id: string;
  namespace: string;
  name: string;
  version: number;
  hash: string;
  source: string;
  definition: Definition;
  createdAt: Date;
}

/**
 * The latest version of every definition of `namespace` whose latest version has a trigger on `event`,
 * by name. Candidate names come from the trigger index (migration 0081); a name whose newest version
 * dropped the trigger is left out, since only the latest version of a definition is started by events.
 */
export async function listTriggeredDefinitions(
  sql: Db,
  namespace: string,
  event: string,
): Promise<DefinitionRecord[]> {
  const wanted = JSON.stringify([{ event }]);
  const rows = await sql<DefinitionRow[]>`
    SELECT d.id::text, d.namespace, d.name, d.version, d.hash, d.source, d.definition, d.created_at
      FROM (SELECT DISTINCT name FROM weft.definitions
             WHERE definition ? 'triggers' AND definition -> 'triggers' @> ${wanted}::text::jsonb
               AND namespace = ${namespace}) t
     CROSS JOIN LATERAL (
       SELECT * FROM weft.definitions l WHERE l.namespace = ${namespace} AND l.name = t.name
        ORDER BY l.version DESC LIMIT 1) d
     WHERE d.definition -> 'triggers' @> ${wanted}::text::jsonb
     ORDER BY d.name`.execute();
  return rows.map((r) => ({ ...r, id: String(r.id) }));
}
