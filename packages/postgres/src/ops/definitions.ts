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

const toRecord = (r: DefinitionRow): DefinitionRecord => ({ ...r, id: String(r.id) });

/**
 * Stores a definition version: the existing one when the hash matches, otherwise the next number.
 * A transaction-scoped advisory lock on (namespace, name) serialises concurrent deploys of one name, so
 * two deploys of different content cannot both take the same next version.
 */
export async function deployDefinition(
  sql: Db,
  namespace: string,
  name: string,
  hash: string,
  source: string,
  definition: Definition,
): Promise<{ record: DefinitionRecord; created: boolean }> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`weft.definition:${namespace}:${name}`}::text, 0))`.execute();
  const [existing] = await sql<DefinitionRow[]>`
    SELECT id::text, namespace, name, version, hash, source, definition, created_at
      FROM weft.definitions WHERE namespace = ${namespace} AND name = ${name} AND hash = ${hash}`.execute();
  if (existing) return { record: toRecord(existing), created: false };
  const [row] = await sql<DefinitionRow[]>`
    INSERT INTO weft.definitions (namespace, name, version, hash, source, definition)
    SELECT ${namespace}, ${name}, coalesce(max(version), 0) + 1, ${hash}, ${source}, ${JSON.stringify(definition)}::text::jsonb
      FROM weft.definitions WHERE namespace = ${namespace} AND name = ${name}
    RETURNING id::text, namespace, name, version, hash, source, definition, created_at`.execute();
  return { record: toRecord(row!), created: true };
}

/** One definition version by its id. */
export async function getDefinitionById(sql: Db, id: string): Promise<DefinitionRecord | null> {
  const [row] = await sql<DefinitionRow[]>`
    SELECT id::text, namespace, name, version, hash, source, definition, created_at
      FROM weft.definitions WHERE id = ${id}::bigint`.execute();
  return row ? toRecord(row) : null;
}

/** One definition version by name; the latest when no version is given. */
export async function getDefinition(
  sql: Db,
  namespace: string,
  name: string,
  version?: number,
): Promise<DefinitionRecord | null> {
  const rows =
    version === undefined
      ? await sql<DefinitionRow[]>`
          SELECT id::text, namespace, name, version, hash, source, definition, created_at
            FROM weft.definitions WHERE namespace = ${namespace} AND name = ${name}
           ORDER BY version DESC LIMIT 1`.execute()
      : await sql<DefinitionRow[]>`
          SELECT id::text, namespace, name, version, hash, source, definition, created_at
            FROM weft.definitions WHERE namespace = ${namespace} AND name = ${name} AND version = ${version}::int`.execute();
  return rows[0] ? toRecord(rows[0]) : null;
}

/**
 * The latest version of each named definition, or null where none is deployed: one index probe a name. A
 * start that took a definition's latest version from the engine's memory checks it with this, in its
 * transaction (test: "a start after another server's deploy runs the new version").
 */
export async function latestDefinitionVersions(
  sql: Db,
  names: readonly { namespace: string; name: string }[],
): Promise<{ namespace: string; name: string; version: number | null }[]> {
  if (names.length === 0) return [];
  return sql<{ namespace: string; name: string; version: number | null }[]>`
    SELECT k.namespace, k.name,
           (SELECT max(d.version) FROM weft.definitions d WHERE d.namespace = k.namespace AND d.name = k.name) AS version
      FROM unnest(${names.map((n) => n.namespace)}::text[], ${names.map((n) => n.name)}::text[]) AS k(namespace, name)`.execute();
}

/** Every definition name with its latest version. */
export async function listDefinitions(
  sql: Db,
  namespace: string,
): Promise<{ name: string; latestVersion: number; versions: number; updatedAt: Date }[]> {
  return sql<{ name: string; latestVersion: number; versions: number; updatedAt: Date }[]>`
    SELECT name, max(version) AS latest_version, count(*)::int AS versions, max(created_at) AS updated_at
      FROM weft.definitions WHERE namespace = ${namespace}
     GROUP BY name ORDER BY name`.execute();
}

/** Every version of one definition, newest first. */
export async function listDefinitionVersions(
  sql: Db,
  namespace: string,
  name: string,
): Promise<DefinitionRecord[]> {
  const rows = await sql<DefinitionRow[]>`
    SELECT id::text, namespace, name, version, hash, source, definition, created_at
      FROM weft.definitions WHERE namespace = ${namespace} AND name = ${name} ORDER BY version DESC`.execute();
  return rows.map(toRecord);
}

/** Namespaces with a definition deployed (every namespace that can have runs). */
export async function listNamespaces(sql: Db): Promise<string[]> {
  const rows = await sql<{ namespace: string }[]>`
    SELECT DISTINCT namespace FROM weft.definitions ORDER BY namespace`.execute();
  return rows.map((r) => r.namespace);
}
