import type { Sql } from 'postgres';

/** Definitions of the seeded runs: five names, three versions each. */
export const SEED_DEFINITIONS = ['orders', 'payments', 'onboarding', 'refunds', 'reports'];
const VERSIONS = 3;

/**
 * Seeds `runs` finished runs into a migrated database, the way a busy namespace looks after a month:
 * five definitions of three versions, 90% completed, 6% failed, 3% cancelled, 1% terminated, start times
 * spread over the last 30 days with time-ordered ids, and one run in ten started with an idempotency
 * key. Rows are made by the server (generate_series), a chunk per statement, then analysed.
 */
export async function seedFinishedRuns(sql: Sql, runs: number, log: (line: string) => void): Promise<void> {
  const defs: { id: string; name: string; version: number }[] = [];
  for (const name of SEED_DEFINITIONS) {
    for (let version = 1; version <= VERSIONS; version++) {
      const source = `name: ${name}\nnodes:\n  - { id: step, task_type: ${name}.step${version} }\n`;
      const definition = {
        name,
        nodes: [{ id: 'step', kind: 'task', line: 3, taskType: `${name}.step${version}` }],
        edges: [],
      };
      const [row] = await sql<{ id: string }[]>`
        INSERT INTO weft.definitions (namespace, name, version, hash, source, definition)
        VALUES ('default', ${name}, ${version}, ${`${name}-${version}`}, ${source}, ${sql.json(definition)})
        RETURNING id::text`;
      defs.push({ id: row!.id, name, version });
    }
  }
  const chunk = 100_000;
  const now = Date.now();
  for (let from = 0; from < runs; from += chunk) {
    const to = Math.min(runs, from + chunk) - 1;
    // Run g starts at a time spread evenly over 30 days; its id carries that time (UUIDv7).
    await sql`
      WITH g AS (
        SELECT g, to_timestamp((${now}::bigint - 30::bigint * 86400000 + (g::bigint * 30 * 86400000) / ${runs}::bigint) / 1000.0) AS at,
               md5(g::text) AS h
          FROM generate_series(${from}::int, ${to}::int) g
      ), d AS (
        SELECT * FROM unnest(${defs.map((d) => d.id)}::bigint[], ${defs.map((d) => d.name)}::text[],
                             ${defs.map((d) => d.version)}::int[]) WITH ORDINALITY AS d(id, name, version, n)
      )
      INSERT INTO weft.runs (id, namespace, definition_id, definition_name, definition_version, status, input, output,
                             created_at, finished_at)
      SELECT (lpad(to_hex((extract(epoch FROM g.at) * 1000)::bigint), 12, '0') || '7' || substr(g.h, 1, 3) || '8'
                || substr(g.h, 4, 15))::uuid,
             'default', d.id, d.name, d.version,
             CASE WHEN g.g % 100 < 90 THEN 'completed' WHEN g.g % 100 < 96 THEN 'failed'
                  WHEN g.g % 100 < 99 THEN 'cancelled' ELSE 'terminated' END,
             jsonb_build_object('order', g.g), '{"ok": true}'::jsonb, g.at, g.at + interval '2 seconds'
        FROM g JOIN d ON d.n = 1 + (g.g % ${defs.length}::int)`;
    log(`seeded ${to + 1} runs`);
  }
  await sql`
    INSERT INTO weft.idempotency_keys (namespace, key, run_id, definition_name)
    SELECT namespace, 'key-' || (input->>'order'), id, definition_name FROM weft.runs WHERE (input->>'order')::int % 10 = 0`;
  await sql`VACUUM ANALYZE weft.runs`;
  await sql`VACUUM ANALYZE weft.idempotency_keys`;
}
