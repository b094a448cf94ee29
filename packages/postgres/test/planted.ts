import { randomUUID } from 'node:crypto';
import type { Sql } from 'postgres';

/** A definition row written directly, for tests that work below the engine; returns its id. */
export async function plantDefinition(sql: Sql, name: string): Promise<string> {
  const [def] = await sql<{ id: string }[]>`
    INSERT INTO weft.definitions (namespace, name, version, hash, source, definition)
    VALUES ('default', ${name}, 1, ${randomUUID()}, '', '{}') RETURNING id::text`;
  return def!.id;
}

/**
 * A running run of the namespace `default` written directly, as a step finds it: attempt `a` running
 * under a lease held by worker `w` (its token returned), attempt `b` waiting.
 */
export async function plantRun(
  sql: Sql,
  definition: { readonly id: string; readonly name: string },
  taskType: string,
): Promise<{ runId: string; taskId: string; token: string }> {
  const runId = randomUUID();
  const taskId = randomUUID();
  const token = randomUUID();
  await sql`
    INSERT INTO weft.runs (id, namespace, definition_id, definition_name, definition_version, status, input)
    VALUES (${runId}::uuid, 'default', ${definition.id}::bigint, ${definition.name}, 1, 'running', '{}')`;
  await sql`
    INSERT INTO weft.tasks (run_id, id, node_id, attempt, status, task_type, worker, lease_token, lease_expires_at)
    VALUES (${runId}::uuid, ${taskId}::uuid, 'a', 1, 'running', ${taskType}, 'w', ${token}::uuid, now() + interval '1 minute'),
           (${runId}::uuid, gen_random_uuid(), 'b', 1, 'waiting', NULL, NULL, NULL, NULL)`;
  return { runId, taskId, token };
}
