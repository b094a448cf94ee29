import { WeftClient } from '@weft/client';
import type postgres from 'postgres';
import { startServer, startWorker, type WorkerProcess } from './processes.js';
import { cpuMs, peakRss, postgresCpuMs, quantile } from './stats.js';
import type { Workload } from './workloads.js';

/** CPU milliseconds per step: server process, worker processes, PostgreSQL. */
export interface CpuPerStep {
  readonly server: number;
  readonly workers: number;
  readonly postgres: number;
}

/** Latency figures of one phase: step to step and start to first task, in milliseconds. */
export interface Latency {
  readonly stepP50: number;
  readonly stepP99: number;
  readonly firstP50: number;
  readonly firstP99: number;
  /** How the runs arrived: `burst` (all at once), `N/s` (paced), `N at a time` (closed loop). */
  readonly load: string;
  /** CPU per step during the phase (small batches cost more per step than the burst's large ones). */
  readonly cpuPerStep?: CpuPerStep;
}

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

type Timing = [string, string, number, number];

const now = () => performance.timeOrigin + performance.now();

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
    let finished = 0;

    // Warm-up: enough runs that the hot paths are compiled before measuring.
    const warm = Math.min(Math.max(20, Math.round(workload.runs / 5)), workload.runs * 2);
    await sink.await(await startBurst(client, definition, warm), workload.steps);
    finished += warm;
    await waitFinished(o.admin, finished);

    // 1. Burst.
    const before = await pgStats(o.admin);
    const cpuBefore = await cpuSnapshot(server.child.pid!, workers);
    const metricsBefore = await engineMetrics(server.url);
    const sentAt = await startBurst(client, definition, workload.runs);
    const total = workload.runs * workload.steps;
    const timings = await sink.await(sentAt, workload.steps, (done) =>
      o.progress(`burst: ${done}/${total} steps`),
    );
    const cpuAfter = await cpuSnapshot(server.child.pid!, workers);
    const metricsAfter = await engineMetrics(server.url);
    finished += workload.runs;
    await waitFinished(o.admin, finished);
    const after = await pgStats(o.admin);
    const started = Math.min(...sentAt.values());
    const ended = Math.max(...timings.map((t) => t[3]));
    const wallMs = ended - started;
    const runsPerSec = workload.runs / (wallMs / 1000);

    // 2. Paced: a steady arrival rate, below what the burst showed the system can take; then a fixed one.
    // Runs started one at a time take a path the burst's bulk starts do not (the single-start endpoint,
    // its statements on each connection): a second of them goes first, unmeasured, so that the figures
    // are of the steady state and not of compiling that path.
    let warmedSingle = false;
    const pacedPhase = async (rate: number, steps?: number): Promise<Latency> => {
      const runs = `${rate.toFixed(0)} runs/s`;
      const load = steps === undefined ? runs : `${steps} steps/s: ${runs}`;
      const count = Math.min(workload.runs, Math.max(20, Math.round(rate * 3)));
      if (!warmedSingle) {
        const warmPaced = Math.min(workload.runs, Math.max(10, Math.round(rate)));
        await sink.await(await startPaced(client, definition, warmPaced, rate), workload.steps);
        finished += warmPaced;
        await waitFinished(o.admin, finished);
        warmedSingle = true;
      }
      o.progress(`${steps === undefined ? 'paced' : `fixed ${steps} steps/s`}: ${count} runs at ${runs}`);
      const cpu = await cpuSnapshot(server.child.pid!, workers);
      const sent = await startPaced(client, definition, count, rate);
      const timed = await sink.await(sent, workload.steps);
      const result = {
        ...latency(workload, timed, sent, load),
        cpuPerStep: cpuDelta(cpu, await cpuSnapshot(server.child.pid!, workers), timed.length),
      };
      finished += count;
      await waitFinished(o.admin, finished);
      return result;
    };
    const paced = o.pacedShare > 0 ? await pacedPhase(Math.max(1, runsPerSec * o.pacedShare)) : null;
    const fixed =
      o.fixedStepsPerSec > 0
        ? await pacedPhase(o.fixedStepsPerSec / workload.steps, o.fixedStepsPerSec)
        : null;

    // 3. Few: a closed loop of a handful of runs, each replaced by a new one when it ends.
    let few: Latency | null = null;
    if (o.fewRuns > 0) {
      // Twenty rounds, so that the median is not at the mercy of one slow round.
      const count = Math.min(workload.runs, o.fewRuns * 20);
      o.progress(`few: ${count} runs, ${o.fewRuns} at a time`);
      const sent = new Map<string, number>();
      const cpu = await cpuSnapshot(server.child.pid!, workers);
      const all: Timing[] = [];
      for (let left = count; left > 0; ) {
        const wave = Math.min(o.fewRuns, left);
        const batch = await startBurst(client, definition, wave);
        for (const [k, v] of batch) sent.set(k, v);
        all.push(...(await sink.await(batch, workload.steps)));
        left -= wave;
      }
      few = {
        ...latency(workload, all, sent, `${o.fewRuns} at a time`),
        cpuPerStep: cpuDelta(cpu, await cpuSnapshot(server.child.pid!, workers), all.length),
      };
      finished += count;
      await waitFinished(o.admin, finished);
    }

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

/** Step-to-step and start-to-first-task latencies of the given runs' timings. */
function latency(
  workload: Workload,
  timings: readonly Timing[],
  sentAt: ReadonlyMap<string, number>,
  load: string,
): Latency {
  const ends = new Map<string, number>();
  for (const [run, node, , end] of timings) ends.set(`${run}/${node}`, end);
  const step: number[] = [];
  const first: number[] = [];
  for (const [run, node, start] of timings) {
    const preds = workload.predecessors[node] ?? [];
    if (preds.length === 0) {
      const sent = sentAt.get(run);
      if (sent !== undefined) first.push(start - sent);
      continue;
    }
    const ready = Math.max(...preds.map((p) => ends.get(`${run}/${p}`) ?? Number.NaN));
    if (!Number.isNaN(ready)) step.push(start - ready);
  }
  return {
    stepP50: quantile(step, 0.5),
    stepP99: quantile(step, 0.99),
    firstP50: quantile(first, 0.5),
    firstP99: quantile(first, 0.99),
    load,
  };
}

/** Starts `count` runs through the bulk endpoint, 100 a request, four requests at a time. */
async function startBurst(
  client: WeftClient,
  definition: string,
  count: number,
): Promise<Map<string, number>> {
  const sent = new Map<string, number>();
  const chunks = Array.from({ length: Math.ceil(count / 100) }, (_, i) => Math.min(100, count - i * 100));
  let next = 0;
  const lane = async () => {
    while (next < chunks.length) {
      const size = chunks[next++]!;
      const at = now();
      const { items } = await client.startRuns(
        definition,
        Array.from({ length: size }, () => ({})),
      );
      for (const item of items) {
        if (!('id' in item)) throw new Error(`a start was refused: ${item.error.message}`);
        sent.set(item.id, at);
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, lane));
  return sent;
}

/** Starts `count` runs one by one at `rate` per second. */
async function startPaced(
  client: WeftClient,
  definition: string,
  count: number,
  rate: number,
): Promise<Map<string, number>> {
  const sent = new Map<string, number>();
  const began = now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const due = began + (i * 1000) / rate;
    const wait = due - now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const at = now();
    pending.push(
      client.startRun(definition, {}).then((run) => {
        sent.set(run.id, at);
      }),
    );
  }
  await Promise.all(pending);
  return sent;
}

/** Collects the workers' timings, sorted by run, so each phase can wait for its own runs. */
class TimingSink {
  private readonly byRun = new Map<string, Timing[]>();

  constructor(private readonly workers: readonly WorkerProcess[]) {}

  /** Waits until every step of the given runs has run, and returns their timings. */
  async await(
    runs: ReadonlyMap<string, number>,
    steps: number,
    progress?: (done: number) => void,
  ): Promise<Timing[]> {
    const until = Date.now() + 300_000;
    let lastProgress = 0;
    for (;;) {
      for (const w of this.workers) {
        for (const t of await w.dump()) {
          const list = this.byRun.get(t[0]);
          if (list) list.push(t);
          else this.byRun.set(t[0], [t]);
        }
      }
      let done = 0;
      for (const id of runs.keys()) done += this.byRun.get(id)?.length ?? 0;
      if (progress && Date.now() - lastProgress > 500) {
        progress(done);
        lastProgress = Date.now();
      }
      if (done >= runs.size * steps) break;
      if (Date.now() > until)
        throw new Error(`only ${done} of ${runs.size * steps} steps ran within 5 minutes`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return [...runs.keys()].flatMap((id) => this.byRun.get(id) ?? []);
  }
}

async function waitFinished(admin: postgres.Sql, runs: number): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    const [row] = await admin<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM weft.runs WHERE status = 'completed'`;
    if (row!.n >= runs) return;
    if (Date.now() > until) throw new Error(`only ${row!.n} of ${runs} runs completed`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function cpuSnapshot(server: number, workers: WorkerProcess[]): Promise<CpuPerStep> {
  const w = await Promise.all(workers.map((x) => cpuMs(x.child.pid!)));
  return {
    server: await cpuMs(server),
    workers: w.reduce((a, b) => a + b, 0),
    postgres: await postgresCpuMs(),
  };
}

/** CPU per step between two snapshots, over `steps` steps. */
function cpuDelta(before: CpuPerStep, after: CpuPerStep, steps: number): CpuPerStep {
  return {
    server: (after.server - before.server) / steps,
    workers: (after.workers - before.workers) / steps,
    postgres: (after.postgres - before.postgres) / steps,
  };
}

/** The server's counters of events decided and node instances read for them. */
async function engineMetrics(url: string): Promise<{ events: number; reads: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { events: read('weft_events_decided_total'), reads: read('weft_node_instances_read_total') };
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
