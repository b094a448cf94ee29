import { WeftClient } from '@weft/client';
import type postgres from 'postgres';
import {
  type CpuPerStep,
  cpuDelta,
  cpuSnapshot,
  type Latency,
  LatencyPhases,
  latency,
  startBurst,
  TimingSink,
} from './phases.js';
import { startServer, startWorker, type WorkerProcess } from './processes.js';
import { peakRss } from './stats.js';
import type { Workload } from './workloads.js';

export type { CpuPerStep, Latency } from './phases.js';

/** What one measured run of a workload gives. */
export interface Measurement {
  readonly workload: string;
  readonly runs: number;
  readonly steps: number;
  readonly wallMs: number;
  readonly stepsPerSec: number;
  readonly runsPerSec: number;
  /** Latency while every run was started at once (dominated by queueing: Little's law). */
  readonly burst: Latency;
  /** Latency with runs arriving at a steady rate below capacity (a share of the burst's rate). */
  readonly paced: Latency | null;
  /**
   * Latency with runs arriving at a fixed number of steps a second, the same for every version and
   * machine, so that latencies compare across them (the paced phase's rate moves with the throughput).
   */
  readonly fixed: Latency | null;
  /** Latency with only a few runs in flight (W2 only). */
  readonly few: Latency | null;
  readonly commitsPerStep: number;
  /** Statements the server sent to PostgreSQL per step during the burst (weft_db_statements_total). */
  readonly statementsPerStep: number;
  readonly walBytesPerStep: number;
  readonly serverRssMb: number;
  readonly workerRssMb: number;
  /** Node instances the server read per event decided, during the burst (it follows the frontier). */
  readonly readsPerEvent: number;
  /** CPU milliseconds per step during the burst: server process, worker processes, PostgreSQL. */
  readonly cpuPerStep: CpuPerStep;
}

/** How to run a workload. */
export interface RunOptions {
  readonly databaseUrl: string;
  readonly admin: postgres.Sql;
  readonly port: number;
  readonly workers: number;
  readonly concurrency: number;
  /** Share of the burst's run rate at which the paced phase starts runs (0 skips it). */
  readonly pacedShare: number;
  /** Steps a second at which the fixed-rate phase starts runs (0 skips it). */
  readonly fixedStepsPerSec: number;
  /** Runs kept in flight in the closed-loop phase (0 skips it). */
  readonly fewRuns: number;
  readonly progress: (line: string) => void;
}

/**
 * Runs one workload on a fresh server and fresh worker processes. Three phases:
 * 1. burst: every run is started at once (the bulk start endpoint, 100 runs a request); this gives the
 *    throughput, the commits, WAL and CPU per step;
 * 2. paced: runs arrive at a steady rate, a share of the burst's rate; this gives latency under load;
 *    then the same at a fixed number of steps a second, comparable across versions and machines;
 * 3. few (closed loop): a handful of runs at a time; latency with little else going on.
 * Latencies come from the workers' own clocks: a step's latency runs from the end of its last
 * predecessor's handler to the start of its own.
 */
export async function runWorkload(workload: Workload, o: RunOptions): Promise<Measurement> {
  const server = await startServer(o.databaseUrl, o.port);
  const workers: WorkerProcess[] = [];
  const client = new WeftClient({ url: server.url, connections: 32 });
  const sink = new TimingSink(workers);
  try {
    for (let i = 0; i < o.workers; i++)
      workers.push(await startWorker(server.url, `bench-${i + 1}`, o.concurrency));
    await client.deploy(workload.yaml);
    const definition = `bench-${workload.id.toLowerCase()}`;
    const phases = new LatencyPhases({
      client,
      definition,
      workload,
      sink,
      admin: o.admin,
      serverPid: server.child.pid!,
      workers,
      progress: o.progress,
    });

    // Warm-up: enough runs that the hot paths are compiled before measuring.
    await phases.warmUp();

    // 1. Burst.
    const before = await pgStats(o.admin);
    const cpuBefore = await cpuSnapshot(server.child.pid!, workers);
    const metricsBefore = await engineMetrics(server.url);
    const sentAt = await startBurst(client, definition, workload.runs, workload.input);
    const total = workload.runs * workload.steps;
    const timings = await sink.await(sentAt, workload.steps, (done) =>
      o.progress(`burst: ${done}/${total} steps`),
    );
    const cpuAfter = await cpuSnapshot(server.child.pid!, workers);
    const metricsAfter = await engineMetrics(server.url);
    await phases.finish(workload.runs);
    const after = await pgStats(o.admin);
    const started = Math.min(...sentAt.values());
    const ended = Math.max(...timings.map((t) => t[3]));
    const wallMs = ended - started;
    const runsPerSec = workload.runs / (wallMs / 1000);

    // 2. Paced: a steady arrival rate, below what the burst showed the system can take; then a fixed one.
    const paced = o.pacedShare > 0 ? await phases.paced(Math.max(1, runsPerSec * o.pacedShare)) : null;
    const fixed =
      o.fixedStepsPerSec > 0
        ? await phases.paced(o.fixedStepsPerSec / workload.steps, o.fixedStepsPerSec)
        : null;

    // 3. Few: a closed loop of a handful of runs, each replaced by a new one when it ends.
    const few = o.fewRuns > 0 ? await phases.few(o.fewRuns) : null;

    const serverRss = await peakRss(server.child.pid!);
    const workerRss = Math.max(...(await Promise.all(workers.map((w) => peakRss(w.child.pid!)))));
    return {
      workload: workload.id,
      runs: workload.runs,
      steps: timings.length,
      wallMs,
      stepsPerSec: timings.length / (wallMs / 1000),
      runsPerSec,
      burst: latency(workload, timings, sentAt, 'burst'),
      paced,
      fixed,
      few,
      commitsPerStep: (after.commits - before.commits) / timings.length,
      statementsPerStep: (metricsAfter.statements - metricsBefore.statements) / timings.length,
      walBytesPerStep: (after.walBytes - before.walBytes) / timings.length,
      serverRssMb: serverRss / 2 ** 20,
      workerRssMb: workerRss / 2 ** 20,
      readsPerEvent:
        (metricsAfter.reads - metricsBefore.reads) / Math.max(1, metricsAfter.events - metricsBefore.events),
      cpuPerStep: cpuDelta(cpuBefore, cpuAfter, timings.length),
    };
  } finally {
    await client.close();
    await Promise.all(workers.map((w) => w.stop()));
    await server.stop();
  }
}

/** The server's counters of events decided, node instances read for them, and statements sent. */
async function engineMetrics(url: string): Promise<{ events: number; reads: number; statements: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    events: read('weft_events_decided_total'),
    reads: read('weft_node_instances_read_total'),
    statements: read('weft_db_statements_total'),
  };
}

/**
 * Counters that are exact at any moment: the next transaction id (one per committed or aborted
 * transaction that wrote, read without taking one) and the WAL insert position. pg_stat_database and
 * pg_stat_wal lag: a backend publishes its counters when it goes idle, at most once a second, so the last
 * second of a burst can stay unpublished while the server keeps its connections open (they undercounted
 * WAL by about 15%). Read-only transactions take no transaction id and flush no WAL, so they are not
 * counted.
 */
async function pgStats(admin: postgres.Sql): Promise<{ commits: number; walBytes: number }> {
  const [row] = await admin<{ xid: string; wal: string }[]>`
    SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xid,
           (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::text AS wal`;
  return { commits: Number(row!.xid), walBytes: Number(row!.wal) };
}
