import type { Json, WeftClient } from '@weft/client';
import type postgres from 'postgres';
import type { Timing, WorkerProcess } from './processes.js';
import { cpuMs, postgresCpuMs, postmasterPid, quantile } from './stats.js';
import { now } from './timing-feed.js';
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

export type { Timing } from './processes.js';

/**
 * How a path starts runs: over HTTP (a server's client), or in the embedded path's own process. Start
 * times are wall-clock milliseconds, on the clock the handlers' timings use.
 */
export interface RunStarter {
  /** Starts `count` runs at once; resolves once all are started, with each run's start time. */
  burst(count: number): Promise<Map<string, number>>;
  /** Starts `count` runs one by one at `rate` a second. */
  paced(count: number, rate: number): Promise<Map<string, number>>;
  /** Waits until the results the path awaits have arrived; when the last did (embedded path only). */
  settled?(): Promise<number>;
}

/** Starts runs of `definition` through a server: the bulk endpoint for bursts, one request a run paced. */
export function serverStarter(client: WeftClient, definition: string, input: Json = {}): RunStarter {
  return {
    burst: (count) => startBurst(client, definition, count, input),
    paced: (count, rate) => startPaced(client, definition, count, rate, input),
  };
}

/**
 * What the latency phases drive: a server (Weft's or the protocol floor's) and its worker processes, or
 * the embedded path's process (as `serverPid`, with no workers).
 */
export interface PhaseTarget {
  readonly starter: RunStarter;
  readonly workload: Workload;
  readonly sink: TimingSink;
  readonly admin: postgres.Sql;
  readonly serverPid: number;
  readonly workers: readonly WorkerProcess[];
  readonly progress: (line: string) => void;
}

/**
 * The phases that measure latency, shared by Weft and the protocol floor so that both see the same
 * arrivals. Counts the runs it has finished (`finished`), since the runs table holds every phase's runs.
 */
export class LatencyPhases {
  finished = 0;
  private warmedSingle = false;

  constructor(private readonly t: PhaseTarget) {}

  /**
   * The warm-up before any measurement: a fifth of the workload's runs (at least 20) at once, so the hot
   * paths are compiled. Kept this short so that figures compare with earlier versions of the benchmark.
   */
  async warmUp(): Promise<void> {
    const { runs, warmRuns } = this.t.workload;
    await this.warm(warmRuns ?? Math.min(Math.max(20, Math.round(runs / 5)), runs * 2));
  }

  /** Starts `count` runs at once and waits until they have finished (unmeasured). */
  private async warm(count: number): Promise<void> {
    const t = this.t;
    await t.sink.await(await t.starter.burst(count), t.workload.steps);
    await this.finish(count);
  }

  /**
   * Runs arriving at a steady rate. Runs started one at a time take a path bulk starts do not (the
   * single-start endpoint, its statements on each connection): a second of them goes first, unmeasured,
   * so that the figures are of the steady state and not of compiling that path.
   */
  async paced(rate: number, steps?: number): Promise<Latency> {
    const t = this.t;
    const runs = `${rate.toFixed(0)} runs/s`;
    const load = steps === undefined ? runs : `${steps} steps/s: ${runs}`;
    const count = Math.min(t.workload.runs, Math.max(20, Math.round(rate * 3)));
    if (!this.warmedSingle) {
      const warmPaced = Math.min(t.workload.runs, Math.max(10, Math.round(rate)));
      await t.sink.await(await t.starter.paced(warmPaced, rate), t.workload.steps);
      await this.finish(warmPaced);
      this.warmedSingle = true;
    }
    t.progress(`${steps === undefined ? 'paced' : `fixed ${steps} steps/s`}: ${count} runs at ${runs}`);
    const cpu = await cpuSnapshot(t);
    const sent = await t.starter.paced(count, rate);
    const timed = await t.sink.await(sent, t.workload.steps);
    const result = {
      ...latency(t.workload, timed, sent, load),
      cpuPerStep: cpuDelta(cpu, await cpuSnapshot(t), timed.length),
    };
    await this.finish(count);
    return result;
  }

  /** A closed loop of `inFlight` runs, each wave started when the last has ended; twenty waves. */
  async few(inFlight: number): Promise<Latency> {
    const t = this.t;
    // Twenty rounds, so that the median is not at the mercy of one slow round.
    const count = Math.min(t.workload.runs, inFlight * 20);
    t.progress(`few: ${count} runs, ${inFlight} at a time`);
    const sent = new Map<string, number>();
    const cpu = await cpuSnapshot(t);
    const all: Timing[] = [];
    for (let left = count; left > 0; ) {
      const wave = Math.min(inFlight, left);
      const batch = await t.starter.burst(wave);
      for (const [k, v] of batch) sent.set(k, v);
      all.push(...(await t.sink.await(batch, t.workload.steps)));
      left -= wave;
    }
    const result = {
      ...latency(t.workload, all, sent, `${inFlight} at a time`),
      cpuPerStep: cpuDelta(cpu, await cpuSnapshot(t), all.length),
    };
    await this.finish(count);
    return result;
  }

  /** Counts `count` more runs as finished and waits until the runs table agrees. */
  async finish(count: number): Promise<void> {
    this.finished += count;
    await this.t.starter.settled?.();
    await waitFinished(this.t.admin, this.finished);
  }
}

/** Step-to-step and start-to-first-task latencies of the given runs' timings. */
export function latency(
  workload: Workload,
  timings: readonly Timing[],
  sentAt: ReadonlyMap<string, number>,
  load: string,
): Latency {
  const ends = new Map<string, number>();
  for (const [run, node, , end] of timings) ends.set(`${run}/${node}`, end);
  const ready = workload.map ? mapReady(workload.map, timings) : null;
  const step: number[] = [];
  const first: number[] = [];
  for (const [run, node, start] of timings) {
    const preds = workload.predecessors[node] ?? [];
    const after = ready
      ? ready.get(`${run}/${node}`)
      : preds.length === 0
        ? undefined
        : Math.max(...preds.map((p) => ends.get(`${run}/${p}`) ?? Number.NaN));
    if (after === undefined) {
      const sent = sentAt.get(run);
      if (sent !== undefined) first.push(start - sent);
    } else if (!Number.isNaN(after)) step.push(start - after);
  }
  return {
    stepP50: quantile(step, 0.5),
    stepP99: quantile(step, 0.99),
    firstP50: quantile(first, 0.5),
    firstP99: quantile(first, 0.99),
    load,
  };
}

/**
 * When each map item could start (absent for the first `concurrency` items): item `i` waits for a slot,
 * freed by the `(i - concurrency + 1)`th item of its run to end, whichever item that was.
 */
function mapReady(map: NonNullable<Workload['map']>, timings: readonly Timing[]): Map<string, number> {
  const prefix = `${map.node}[`;
  const endsByRun = new Map<string, number[]>();
  for (const [run, node, , end] of timings) {
    if (!node.startsWith(prefix)) continue;
    const list = endsByRun.get(run) ?? [];
    if (list.length === 0) endsByRun.set(run, list);
    list.push(end);
  }
  for (const list of endsByRun.values()) list.sort((a, b) => a - b);
  const ready = new Map<string, number>();
  for (const [run, node] of timings) {
    if (!node.startsWith(prefix)) continue;
    const freedBy = Number(node.slice(prefix.length, -1)) - map.concurrency;
    const end = endsByRun.get(run)?.[freedBy];
    if (freedBy >= 0) ready.set(`${run}/${node}`, end ?? Number.NaN);
  }
  return ready;
}

/** Starts `count` runs through the bulk endpoint, 100 a request, four requests at a time. */
export async function startBurst(
  client: WeftClient,
  definition: string,
  count: number,
  input: Json = {},
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
        Array.from({ length: size }, () => input),
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
export async function startPaced(
  client: WeftClient,
  definition: string,
  count: number,
  rate: number,
  input: Json = {},
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
      client.startRun(definition, input).then((run) => {
        sent.set(run.id, at);
      }),
    );
  }
  await Promise.all(pending);
  return sent;
}

/** Collects the workers' timings, sorted by run, so each phase can wait for its own runs. */
export class TimingSink {
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

/** Waits until `runs` runs in all have completed. */
export async function waitFinished(admin: postgres.Sql, runs: number): Promise<void> {
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

/**
 * CPU used so far by the server (embedded path: its one process), the workers together, and the
 * PostgreSQL server of `admin` (only it: see postgresCpuMs).
 */
export async function cpuSnapshot(
  t: Pick<PhaseTarget, 'serverPid' | 'workers' | 'admin'>,
): Promise<CpuPerStep> {
  const w = await Promise.all(t.workers.map((x) => cpuMs(x.child.pid!)));
  return {
    server: await cpuMs(t.serverPid),
    workers: w.reduce((a, b) => a + b, 0),
    postgres: await postgresCpuMs(await postmasterPid(t.admin)),
  };
}

/** CPU per step between two snapshots, over `steps` steps. */
export function cpuDelta(before: CpuPerStep, after: CpuPerStep, steps: number): CpuPerStep {
  return {
    server: (after.server - before.server) / steps,
    workers: (after.workers - before.workers) / steps,
    postgres: (after.postgres - before.postgres) / steps,
  };
}
