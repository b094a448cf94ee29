import { WeftClient } from '@weft/client';
import type postgres from 'postgres';
import { startServer, startWorker, type WorkerProcess } from './processes.js';
import { cpuMs, peakRss, postgresCpuMs, quantile } from './stats.js';
import type { Workload } from './workloads.js';

/** What one measured run of a workload gives. */
export interface Measurement {
  readonly workload: string;
  readonly runs: number;
  readonly steps: number;
  readonly wallMs: number;
  readonly stepsPerSec: number;
  readonly runsPerSec: number;
  readonly stepLatencyP50: number;
  readonly stepLatencyP99: number;
  readonly firstTaskP50: number;
  readonly firstTaskP99: number;
  readonly commitsPerStep: number;
  readonly walBytesPerStep: number;
  readonly serverRssMb: number;
  readonly workerRssMb: number;
  /** CPU milliseconds per step: server process, worker processes, PostgreSQL. */
  readonly cpuPerStep: { readonly server: number; readonly workers: number; readonly postgres: number };
}

/** How to run a workload. */
export interface RunOptions {
  readonly databaseUrl: string;
  readonly admin: postgres.Sql;
  readonly port: number;
  readonly workers: number;
  readonly concurrency: number;
  readonly progress: (line: string) => void;
}

type Timing = [string, string, number, number];

/**
 * Runs one workload on a fresh server and fresh worker processes: deploys it, warms up, then starts every
 * run and measures until every step has run. Latencies come from the workers' own clocks: a step's
 * latency is from the end of its last predecessor's handler to the start of its own.
 */
export async function runWorkload(workload: Workload, o: RunOptions): Promise<Measurement> {
  const server = await startServer(o.databaseUrl, o.port);
  const workers: WorkerProcess[] = [];
  const client = new WeftClient({ url: server.url, connections: 32 });
  try {
    for (let i = 0; i < o.workers; i++)
      workers.push(await startWorker(server.url, `bench-${i + 1}`, o.concurrency));
    await client.deploy(workload.yaml);
    const definition = `bench-${workload.id.toLowerCase()}`;

    // Warm-up: a few runs so that code paths are compiled before measuring.
    const warm = Math.max(2, Math.round(workload.runs / 20));
    await startAll(client, definition, warm);
    await collect(workers, warm * workload.steps, () => {});

    await settleStats();
    const before = await pgStats(o.admin);
    const cpuBefore = await cpuSnapshot(server.child.pid!, workers);
    const sentAt = await startAll(client, definition, workload.runs);
    const total = workload.runs * workload.steps;
    const timings = await collect(workers, total, (done) => o.progress(`${done}/${total} steps`));
    const cpuAfter = await cpuSnapshot(server.child.pid!, workers);
    await waitFinished(o.admin, workload.runs + warm);
    await settleStats();
    const after = await pgStats(o.admin);

    const started = Math.min(...sentAt.values());
    const ended = Math.max(...timings.map((t) => t[3]));
    const wallMs = ended - started;
    const ends = new Map<string, number>();
    const starts = new Map<string, number>();
    for (const [run, node, start, end] of timings) {
      ends.set(`${run}/${node}`, end);
      starts.set(`${run}/${node}`, start);
    }
    const stepLatency: number[] = [];
    const firstTask: number[] = [];
    for (const [run, node, start] of timings) {
      const preds = workload.predecessors[node] ?? [];
      if (preds.length === 0) {
        const sent = sentAt.get(run);
        if (sent !== undefined) firstTask.push(start - sent);
        continue;
      }
      const ready = Math.max(...preds.map((p) => ends.get(`${run}/${p}`) ?? Number.NaN));
      if (!Number.isNaN(ready)) stepLatency.push(start - ready);
    }
    const serverRss = await peakRss(server.child.pid!);
    const workerRss = Math.max(...(await Promise.all(workers.map((w) => peakRss(w.child.pid!)))));
    return {
      workload: workload.id,
      runs: workload.runs,
      steps: timings.length,
      wallMs,
      stepsPerSec: timings.length / (wallMs / 1000),
      runsPerSec: workload.runs / (wallMs / 1000),
      stepLatencyP50: quantile(stepLatency, 0.5),
      stepLatencyP99: quantile(stepLatency, 0.99),
      firstTaskP50: quantile(firstTask, 0.5),
      firstTaskP99: quantile(firstTask, 0.99),
      commitsPerStep: (after.commits - before.commits) / timings.length,
      walBytesPerStep: (after.walBytes - before.walBytes) / timings.length,
      serverRssMb: serverRss / 2 ** 20,
      workerRssMb: workerRss / 2 ** 20,
      cpuPerStep: {
        server: (cpuAfter.server - cpuBefore.server) / timings.length,
        workers: (cpuAfter.workers - cpuBefore.workers) / timings.length,
        postgres: (cpuAfter.postgres - cpuBefore.postgres) / timings.length,
      },
    };
  } finally {
    await client.close();
    await Promise.all(workers.map((w) => w.stop()));
    await server.stop();
  }
}

/** Starts `count` runs, 32 requests in flight, and returns when each start request was sent, by run id. */
async function startAll(client: WeftClient, definition: string, count: number): Promise<Map<string, number>> {
  const sent = new Map<string, number>();
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next++;
      const at = performance.timeOrigin + performance.now();
      const run = await client.startRun(definition, {});
      sent.set(run.id, at);
    }
  };
  await Promise.all(Array.from({ length: 32 }, lane));
  return sent;
}

async function collect(
  workers: WorkerProcess[],
  expected: number,
  progress: (done: number) => void,
): Promise<Timing[]> {
  const all: Timing[] = [];
  const until = Date.now() + 300_000;
  let lastProgress = 0;
  while (all.length < expected) {
    await new Promise((r) => setTimeout(r, 25));
    for (const w of workers) all.push(...(await w.dump()));
    if (Date.now() - lastProgress > 500) {
      progress(all.length);
      lastProgress = Date.now();
    }
    if (Date.now() > until) throw new Error(`only ${all.length} of ${expected} steps ran within 5 minutes`);
  }
  return all;
}

async function waitFinished(admin: postgres.Sql, runs: number): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    const [row] = await admin<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM weft.runs WHERE status = 'completed'`;
    if (row!.n >= runs) return;
    if (Date.now() > until) throw new Error(`only ${row!.n} of ${runs} runs completed`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function cpuSnapshot(
  server: number,
  workers: WorkerProcess[],
): Promise<{ server: number; workers: number; postgres: number }> {
  const w = await Promise.all(workers.map((x) => cpuMs(x.child.pid!)));
  return {
    server: await cpuMs(server),
    workers: w.reduce((a, b) => a + b, 0),
    postgres: await postgresCpuMs(),
  };
}

/** PostgreSQL publishes its statistics at most once a second; wait so counters are current. */
function settleStats(): Promise<void> {
  return new Promise((r) => setTimeout(r, 1100));
}

async function pgStats(admin: postgres.Sql): Promise<{ commits: number; walBytes: number }> {
  const [db] = await admin<
    { commits: string }[]
  >`SELECT xact_commit::text AS commits FROM pg_stat_database WHERE datname = current_database()`;
  const [wal] = await admin<{ bytes: string }[]>`SELECT wal_bytes::text AS bytes FROM pg_stat_wal`;
  return { commits: Number(db!.commits), walBytes: Number(wal!.bytes) };
}
