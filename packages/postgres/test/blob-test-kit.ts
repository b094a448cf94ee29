import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Json } from '@weft/core';
import { FolderBlobStore } from '@weft/engine';
import type { Sql } from 'postgres';

/** A folder blob store of its own, in the system's temporary folder, and a way to remove it. */
export async function tempBlobStore(): Promise<{ blobs: FolderBlobStore; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'weft-blobs-'));
  return { blobs: new FolderBlobStore(dir), remove: () => rm(dir, { recursive: true, force: true }) };
}

/** The blob key a large value is stored under (its content hash, as the payload store computes it). */
export function blobKeyOf(value: Json): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('base64url');
}

/** A value over a 1000-byte threshold, different for each `tag`. */
export function largeValue(tag: string): Json {
  return { tag, text: 'x'.repeat(4000) };
}

/**
 * Blob references stored in a run's rows (found at any depth, as the purge finds them) with no `blob_refs`
 * row for that run and key: what the blob deleter could not see (invariant 30). Empty when every writer
 * recorded what it stored.
 */
export async function unrecordedReferences(sql: Sql): Promise<{ runId: string; key: string }[]> {
  return sql<{ runId: string; key: string }[]>`
    SELECT DISTINCT v.run_id AS "runId", k.key #>> '{}' AS key
      FROM (SELECT id AS run_id, input AS v FROM weft.runs UNION ALL SELECT id, output FROM weft.runs
            UNION ALL SELECT run_id, input FROM weft.tasks UNION ALL SELECT run_id, output FROM weft.tasks
            UNION ALL SELECT run_id, data FROM weft.history UNION ALL SELECT run_id, event FROM weft.inbox
            UNION ALL SELECT run_id, buffered FROM weft.mailboxes
            UNION ALL SELECT run_id, data FROM weft.human_tasks) AS v(run_id, v),
           jsonb_path_query(v.v, '$.**."$weft_blob"') AS k(key)
     WHERE v.v IS NOT NULL AND jsonb_typeof(k.key) = 'string'
       AND NOT EXISTS (SELECT 1 FROM weft.blob_refs r WHERE r.run_id = v.run_id AND r.key = k.key #>> '{}')`;
}
