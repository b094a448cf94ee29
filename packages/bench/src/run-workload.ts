import { WeftClient } from '@weft/client';
import type postgres from 'postgres';
import { type BurstFigures, measureBurst } from './burst.js';
import type { EngineCounters } from './embedded-protocol.js';
import { PrivateMemoryWatch } from './memory-watch.js';
import {
  type CpuPerStep,
  type Latency,
  LatencyPhases,
  latency,
  serverStarter,
  TimingSink,
} from './phases.js';
import { startServer, startWorker, type WorkerProcess } from './processes.js';
import { peakRss } from './stats.js';
import type { Workload } from './workloads.js';

export type { CpuPerStep, Latency } from './phases.js';

/** What one measured run of a workload gives. */
export interface Measurement {
  readonly workload: string;
  /** `server` (a server process and worker processes over HTTP) or `embedded` (createEngine in one process). */
  readonly path: Path;
  readonly runs: number;
  readonly steps: number;
  /** The burst's wall time: from the first start to the last run seen completed in PostgreSQL. */
  readonly wallMs: number;
  /** From the first start to the last handler's end (the burst's wall time before it ended in PostgreSQL). */
  readonly handlersWallMs: number;
  /** Embedded path: from the first start to the last run's result reaching the caller; null on the server path. */
  readonly resultsWallMs: number | null;
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
  /** Peak RSS of the server process (of the embedded path's one process). */
  readonly serverRssMb: number;
  /** Peak RSS of the worker processes (0 on the embedded path: it has none). */
  readonly workerRssMb: number;
  /**
   * Peak private (anonymous) memory of a worker process, without the Node binary's pages that every Node
   * process on the host shares (0 on the embedded path).
   */
  readonly workerPrivateMb: number;
  /** Node instances the server read per event decided, during the burst (it follows the frontier). */
  readonly readsPerEvent: number;
  /**
   * CPU milliseconds per step during the burst: server process, worker processes, PostgreSQL (embedded
   * path: its one process, 0, PostgreSQL).
   */
  readonly cpuPerStep: CpuPerStep;
}

/** Which way runs go: through a server and worker processes, or Weft as a library in one process. */
export type Path = 'server' | 'embedded';

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
  let watch: PrivateMemoryWatch | null = null;
  const client = new WeftClient({ url: server.url, connections: 32 });
  try {
    for (let i = 0; i < o.workers; i++)
      workers.push(await startWorker(server.url, `bench-${i + 1}`, o.concurrency));
    watch = new PrivateMemoryWatch(workers.map((w) => w.child.pid!));
    await client.deploy(workload.yaml);
    const target = {
      starter: serverStarter(client, `bench-${workload.id.toLowerCase()}`, workload.input),
      workload,
      sink: new TimingSink(workers),
      admin: o.admin,
      serverPid: server.child.pid!,
      workers,
      progress: o.progress,
    };
    const phases = new LatencyPhases(target);
    // Warm-up: enough runs that the hot paths are compiled before measuring.
    await phases.warmUp();
    const burst = await measureBurst(target, phases, () => engineMetrics(server.url));
    const rest = await latencyPhases(phases, workload, burst, o);
    const workerRss = Math.max(...(await Promise.all(workers.map((w) => peakRss(w.child.pid!)))));
    const memory = {
      server: await peakRss(server.child.pid!),
      worker: workerRss,
      workerPrivate: await watch.stop(),
    };
    return measurement('server', workload, burst, rest, memory);
  } finally {
    await watch?.stop();
    await client.close();
    await Promise.all(workers.map((w) => w.stop()));
    await server.stop();
  }
}

/** The latency phases after a burst, on either path. */
export async function latencyPhases(
  phases: LatencyPhases,
  workload: Workload,
  burst: BurstFigures,
  o: Pick<RunOptions, 'pacedShare' | 'fixedStepsPerSec' | 'fewRuns'>,
): Promise<Pick<Measurement, 'paced' | 'fixed' | 'few'>> {
  const runsPerSec = workload.runs / (burst.wallMs / 1000);
  // 2. Paced: a steady arrival rate, below what the burst showed the system can take; then a fixed one.
  const paced = o.pacedShare > 0 ? await phases.paced(Math.max(1, runsPerSec * o.pacedShare)) : null;
  const fixed =
    o.fixedStepsPerSec > 0
      ? await phases.paced(o.fixedStepsPerSec / workload.steps, o.fixedStepsPerSec)
      : null;
  // 3. Few: a closed loop of a handful of runs, each replaced by a new one when it ends.
  const few = o.fewRuns > 0 ? await phases.few(o.fewRuns) : null;
  return { paced, fixed, few };
}

/**
 * Peak memory of the processes, in bytes: the RSS of the server (embedded: its one process) and of a
 * worker, and a worker's private memory.
 */
export interface PeakMemory {
  readonly server: number;
  readonly worker: number;
  readonly workerPrivate: number;
}

/** A Measurement from a burst's figures, the latency phases and the processes' peak memory. */
export function measurement(
  path: Path,
  workload: Workload,
  b: BurstFigures,
  rest: Pick<Measurement, 'paced' | 'fixed' | 'few'>,
  memory: PeakMemory,
): Measurement {
  const steps = b.timings.length;
  return {
    workload: workload.id,
    path,
    runs: workload.runs,
    steps,
    wallMs: b.wallMs,
    handlersWallMs: b.handlersMs,
    resultsWallMs: b.resultsMs,
    stepsPerSec: steps / (b.wallMs / 1000),
    runsPerSec: workload.runs / (b.wallMs / 1000),
    burst: latency(workload, b.timings, b.sentAt, 'burst'),
    ...rest,
    commitsPerStep: b.commits / steps,
    statementsPerStep: b.counters.statements / steps,
    walBytesPerStep: b.walBytes / steps,
    serverRssMb: memory.server / 2 ** 20,
    workerRssMb: memory.worker / 2 ** 20,
    workerPrivateMb: memory.workerPrivate / 2 ** 20,
    readsPerEvent: b.counters.reads / Math.max(1, b.counters.events),
    cpuPerStep: b.cpuPerStep,
  };
}

/** The server's counters of events decided, node instances read for them, and statements sent. */
async function engineMetrics(url: string): Promise<EngineCounters> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    events: read('weft_events_decided_total'),
    reads: read('weft_node_instances_read_total'),
    statements: read('weft_db_statements_total'),
  };
}
