import { randomUUID } from 'node:crypto';
import type { NewTaskRow, TaskReport } from '@weft/engine';
import { emptyWriteSet } from '@weft/engine';
import { uuidv7 } from '@weft/engine/internal';
import { connect, PgStore } from '@weft/postgres';

/**
 * The floor: the least SQL one step needs in Weft's own schema, batched the way Weft batches. Each loop
 * holds a batch of leased tasks; one transaction per batch completes them (the fenced update), inserts
 * each run's next task already leased (the claim), and appends a history event per step. No HTTP, no
 * run locks, no decide queue, no decisions. Returns steps per second over a 10-step chain, one sample per
 * round. Every connection is opened and has prepared its statements before the first round: a short round
 * would otherwise measure connecting (a backend start and the driver's catalog query), not steps.
 */
export async function measureFloor(
  databaseUrl: string,
  options: { readonly runs: number; readonly loops: number; readonly batch: number; readonly rounds: number },
): Promise<number[]> {
  const { loops } = options;
  const sql = connect(databaseUrl, { max: loops, applicationName: 'weft-bench-floor' });
  const store = new PgStore(sql);
  try {
    await floorRound(sql, store, 2 * loops, loops, 1); // warm-up: opens every connection
    const rates: number[] = [];
    for (let i = 0; i < options.rounds; i++)
      rates.push(await floorRound(sql, store, options.runs, loops, options.batch));
    return rates;
  } finally {
    await sql.end();
  }
}

/** One round: fresh runs, each taken through ten steps; returns steps per second. */
async function floorRound(
  sql: ReturnType<typeof connect>,
  store: PgStore,
  runs: number,
  loops: number,
  batch: number,
): Promise<number> {
  // Each round gets a definition of its own in the same database.
  const name = `floor-${randomUUID()}`;
  const [def] = await sql<{ id: string }[]>`
    INSERT INTO weft.definitions (namespace, name, version, hash, source, definition)
    VALUES ('default', ${name}, 1, ${randomUUID()}, '', '{}') RETURNING id::text`;
  const ids = Array.from({ length: runs }, () => uuidv7());
  await sql`INSERT INTO weft.runs (id, namespace, definition_id, definition_name, definition_version, status, input)
            SELECT id, 'default', ${def!.id}::bigint, ${name}, 1, 'running', '{}' FROM unnest(${ids}::uuid[]) AS id`;
  const steps = 10;
  const row = (runId: string, n: number): NewTaskRow => ({
    id: uuidv7(),
    runId,
    namespace: 'default',
    nodeId: `s${n}`,
    iteration: '',
    attempt: 1,
    status: 'running',
    taskType: 'floor',
    priority: 0,
    timeoutMs: null,
    input: null,
    output: null,
    error: null,
    arrivals: [],
    lease: { worker: 'floor', token: randomUUID(), leaseMs: 90_000 },
  });
  type Held = { runId: string; n: number; id: string; token: string };
  const first = ids.map((runId) => row(runId, 0));
  await store.transaction((tx) => tx.write({ ...emptyWriteSet(), newTasks: first }, { commit: true }));
  const queue: Held[] = first.map((r) => ({ runId: r.runId, n: 0, id: r.id, token: r.lease!.token }));
  const started = performance.now();
  let done = 0;
  const loop = async () => {
    while (queue.length > 0) {
      const held = queue.splice(0, batch);
      const reports: TaskReport[] = held.map((h) => ({
        runId: h.runId,
        taskId: h.id,
        attempt: 1,
        leaseToken: h.token,
        outcome: { kind: 'completed', output: null },
      }));
      const next = held.filter((h) => h.n + 1 < steps).map((h) => row(h.runId, h.n + 1));
      await store.transaction(async (tx) => {
        const verdicts = await tx.finishTasks(reports);
        if (verdicts.some((v) => !v.accepted)) throw new Error('floor: a report was refused');
        await tx.write(
          {
            ...emptyWriteSet(),
            newTasks: next,
            history: held.map((h) => ({
              runId: h.runId,
              seq: h.n + 1,
              type: 'task.completed',
              nodeId: `s${h.n}`,
              iteration: '',
              attempt: 1,
              data: null,
            })),
          },
          { commit: true },
        );
      });
      done += held.length;
      queue.push(
        ...next.map((r) => ({
          runId: r.runId,
          n: Number(r.nodeId.slice(1)),
          id: r.id,
          token: r.lease!.token,
        })),
      );
    }
  };
  await Promise.all(Array.from({ length: loops }, loop));
  return done / ((performance.now() - started) / 1000);
}
