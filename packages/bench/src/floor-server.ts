// The protocol floor's server process: the worker protocol's routes (poll, report, heartbeat) and run
// starts, over HTTP like `weft server`, doing the least SQL a W2 step needs and nothing else. A report
// is one statement, so one round trip and one commit: it locks the reported runs, completes the
// reported attempts if their leases still hold (fencing), inserts each run's next attempt already
// leased to the reporting worker (or queued when it has no room), appends a history event and ends
// the runs whose last node finished. No engine, no definitions read, no decide queue, no wake-ups
// between processes. Run by the benchmark (see protocol-floor.ts), never by users.
import { taskIdempotencyKey } from '@weft/core';
import { connect } from '@weft/postgres';
import Fastify from 'fastify';

const LAST = 9; // W2: nodes s0 .. s9
const TYPE = 'bench.noop';
const LEASE_MS = 90_000;

const sql = connect(process.env.DATABASE_URL!, { max: 16, applicationName: 'weft-bench-protocol-floor' });
const [def] = await sql<{ id: string }[]>`
  INSERT INTO weft.definitions (namespace, name, version, hash, source, definition)
  VALUES ('default', 'bench-w2', 1, 'protocol-floor', '', '{}')
  ON CONFLICT (namespace, name, version) DO UPDATE SET source = '' RETURNING id::text`;

/** A task as the statements return it (the driver turns column names into camel case). */
interface TaskRow {
  id: string;
  runId: string;
  n: number;
  token: string;
}

const leased = (t: TaskRow, expires: string) => ({
  task_id: t.id,
  run_id: t.runId,
  node_id: `s${t.n}`,
  iteration: '',
  attempt: 1,
  task_type: TYPE,
  definition: 'bench-w2',
  input: null,
  lease_token: t.token,
  lease_expires_at: expires,
  deadline_at: null,
  // As the engine computes it: the same for every attempt of the node instance.
  idempotency_key: taskIdempotencyKey(t.runId, `s${t.n}`, ''),
});

/** Polls waiting for queued tasks, woken when runs start or reports queue tasks. */
const waiting = new Set<() => void>();
const wake = () => {
  for (const w of [...waiting]) w();
};

/** Starts runs: each run row and its first attempt, queued, in one statement. */
async function start(count: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    WITH n AS (SELECT gen_random_uuid() AS id, gen_random_uuid() AS task FROM generate_series(1, ${count}::int)),
    runs AS (
      INSERT INTO weft.runs (id, namespace, definition_id, definition_name, definition_version, status, input)
      SELECT id, 'default', ${def!.id}::bigint, 'bench-w2', 1, 'running', '{}' FROM n),
    tasks AS (
      INSERT INTO weft.tasks (run_id, id, node_id, iteration, attempt, status, task_type)
      SELECT id, task, 's0', '', 1, 'queued', ${TYPE} FROM n),
    queue AS (
      INSERT INTO weft.queue (task_id, run_id, namespace, task_type) SELECT task, id, 'default', ${TYPE} FROM n)
    SELECT id FROM n`;
  wake();
  return rows.map((r) => r.id);
}

/** Leases up to `max` queued tasks (the queue row goes, the attempt is marked running with a new token). */
async function claim(worker: string, max: number): Promise<TaskRow[]> {
  return sql<TaskRow[]>`
    WITH picked AS (
      DELETE FROM weft.queue q WHERE q.id IN (
        SELECT id FROM weft.queue WHERE namespace = 'default' AND task_type = ${TYPE}
         ORDER BY priority DESC, id LIMIT ${max}::int FOR UPDATE SKIP LOCKED)
      RETURNING q.task_id, q.run_id)
    UPDATE weft.tasks t
       SET status = 'running', worker = ${worker}, lease_token = gen_random_uuid(), started_at = now(),
           lease_expires_at = now() + ${LEASE_MS}::int * interval '1 millisecond'
      FROM picked p
     WHERE t.run_id = p.run_id AND t.id = p.task_id AND t.status = 'queued'
    RETURNING t.id, t.run_id, substr(t.node_id, 2)::int AS n, t.lease_token AS token`;
}

interface WireReport {
  run_id: string;
  task_id: string;
  lease_token: string;
  output?: unknown;
}

/** One report batch: one statement, one commit (see the top of this file). */
async function report(worker: string, reports: WireReport[], room: number) {
  const rows = await sql<(TaskRow & { kind: 'done' | 'next' | 'queued' })[]>`
    WITH r AS (
      SELECT * FROM unnest(${reports.map((x) => x.run_id)}::uuid[], ${reports.map((x) => x.task_id)}::uuid[],
                           ${reports.map((x) => x.lease_token)}::uuid[],
                           ${reports.map((x) => JSON.stringify(x.output ?? null))}::text[])
        AS r(run_id, id, token, output)),
    locked AS (SELECT w.id FROM weft.runs w WHERE w.id IN (SELECT run_id FROM r) ORDER BY w.id FOR UPDATE),
    done AS (
      UPDATE weft.tasks t SET status = 'completed', output = r.output::jsonb, finished_at = now()
        FROM r JOIN locked l ON l.id = r.run_id
       WHERE t.run_id = r.run_id AND t.id = r.id AND t.status = 'running' AND t.lease_token = r.token
      RETURNING t.run_id, t.id, substr(t.node_id, 2)::int AS n),
    nxt AS (
      SELECT d.run_id, d.n + 1 AS n, gen_random_uuid() AS id, gen_random_uuid() AS token,
             row_number() OVER (ORDER BY d.run_id) <= ${room}::int AS mine
        FROM done d WHERE d.n < ${LAST}::int),
    ins AS (
      INSERT INTO weft.tasks (run_id, id, node_id, iteration, attempt, status, task_type, worker, lease_token,
                              started_at, lease_expires_at)
      SELECT run_id, id, 's' || n, '', 1, CASE WHEN mine THEN 'running' ELSE 'queued' END, ${TYPE},
             CASE WHEN mine THEN ${worker} END, CASE WHEN mine THEN token END, CASE WHEN mine THEN now() END,
             CASE WHEN mine THEN now() + ${LEASE_MS}::int * interval '1 millisecond' END
        FROM nxt),
    enq AS (
      INSERT INTO weft.queue (task_id, run_id, namespace, task_type)
      SELECT id, run_id, 'default', ${TYPE} FROM nxt WHERE NOT mine),
    hist AS (
      INSERT INTO weft.history (run_id, seq, type, node_id, iteration, attempt, data)
      SELECT run_id, n + 1, 'task.completed', 's' || n, '', 1, 'null' FROM done),
    fin AS (
      UPDATE weft.runs w SET status = 'completed', finished_at = now()
        FROM done d WHERE w.id = d.run_id AND d.n = ${LAST}::int)
    SELECT 'done' AS kind, id, run_id, n, NULL::uuid AS token FROM done
    UNION ALL
    SELECT CASE WHEN mine THEN 'next' ELSE 'queued' END, id, run_id, n, token FROM nxt`;
  const accepted = new Set(rows.filter((r) => r.kind === 'done').map((r) => r.id));
  const expires = new Date(Date.now() + LEASE_MS).toISOString();
  if (rows.some((r) => r.kind === 'queued')) wake();
  return {
    results: reports.map((x) => ({ task_id: x.task_id, accepted: accepted.has(x.task_id) })),
    tasks: rows.filter((r) => r.kind === 'next').map((t) => leased(t, expires)),
  };
}

const app = Fastify({ bodyLimit: 32 * 1024 * 1024 });
app.get('/healthz', async () => ({ ok: true }));
app.get('/v1/tasks/dispatch', async () => ({ dispatcher: 'table' }));
app.post<{ Body: { definition: string } }>('/v1/runs', async () => {
  const [id] = await start(1);
  return { id, status: 'running', created: true };
});
app.post<{ Body: { definition: string; inputs: unknown[] } }>('/v1/runs/batch', async (request) => ({
  items: (await start(request.body.inputs.length)).map((id) => ({ id, status: 'running' })),
}));
app.post<{ Body: { worker: string; max?: number; wait_ms?: number } }>(
  '/v1/tasks/poll',
  async (request, reply) => {
    const { worker, max = 1, wait_ms: waitMs = 0 } = request.body;
    const until = Date.now() + waitMs;
    let hungUp = false;
    reply.raw.once('close', () => {
      if (!reply.raw.writableEnded) hungUp = true;
    });
    for (;;) {
      // Registered before the claim, so a start committed while it runs is not missed.
      let woken = false;
      let resolveWake: () => void = () => {};
      const wait = new Promise<void>((resolve) => {
        resolveWake = () => {
          woken = true;
          resolve();
        };
      });
      waiting.add(resolveWake);
      try {
        const tasks = await claim(worker, max);
        const left = until - Date.now();
        if (tasks.length > 0 || left <= 0 || hungUp) {
          const expires = new Date(Date.now() + LEASE_MS).toISOString();
          return { tasks: tasks.map((t) => leased(t, expires)), lease_ms: LEASE_MS, heartbeat_ms: 30_000 };
        }
        if (!woken) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([wait, new Promise<void>((r) => (timer = setTimeout(r, Math.min(left, 1000))))]);
          clearTimeout(timer);
        }
      } finally {
        waiting.delete(resolveWake);
      }
    }
  },
);
app.post<{ Body: { tasks: { task_id: string }[] } }>('/v1/tasks/heartbeat', async (request) => ({
  held: request.body.tasks.map((t) => t.task_id),
  lost: [],
}));
app.post<{ Body: { worker: string; reports: WireReport[]; next?: { max: number } } }>(
  '/v1/tasks/report',
  async (request) => report(request.body.worker, request.body.reports, request.body.next?.max ?? 0),
);

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => {
  void app.close().then(() => sql.end({ timeout: 2 }).then(() => process.exit(0)));
});
