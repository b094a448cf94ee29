import type { CpuPerStep, Latency } from './phases.js';
import type { Measurement } from './run-workload.js';
import { median } from './stats.js';

/** A workload's samples on one path, as one Measurement: medians (RSS: the highest). */
export function summarise(id: string, samples: readonly Measurement[]): Measurement {
  const pick = (f: (m: Measurement) => number) => median(samples.map(f));
  const lat = (f: (m: Measurement) => Latency | null) => medianLatency(samples.map(f));
  const results = samples.map((s) => s.resultsWallMs).filter((r): r is number => r !== null);
  return {
    workload: id,
    path: samples[0]!.path,
    runs: samples[0]!.runs,
    steps: samples[0]!.steps,
    wallMs: pick((s) => s.wallMs),
    handlersWallMs: pick((s) => s.handlersWallMs),
    resultsWallMs: results.length > 0 ? median(results) : null,
    stepsPerSec: pick((s) => s.stepsPerSec),
    runsPerSec: pick((s) => s.runsPerSec),
    burst: lat((s) => s.burst)!,
    paced: lat((s) => s.paced),
    fixed: lat((s) => s.fixed),
    few: lat((s) => s.few),
    commitsPerStep: pick((s) => s.commitsPerStep),
    statementsPerStep: pick((s) => s.statementsPerStep),
    walBytesPerStep: pick((s) => s.walBytesPerStep),
    serverRssMb: Math.max(...samples.map((s) => s.serverRssMb)),
    workerRssMb: Math.max(...samples.map((s) => s.workerRssMb)),
    workerPrivateMb: Math.max(...samples.map((s) => s.workerPrivateMb)),
    readsPerEvent: pick((s) => s.readsPerEvent),
    cpuPerStep: {
      server: pick((s) => s.cpuPerStep.server),
      workers: pick((s) => s.cpuPerStep.workers),
      postgres: pick((s) => s.cpuPerStep.postgres),
    },
  };
}

/** The median of each latency figure over a workload's samples (null when no sample has the phase). */
export function medianLatency(list: readonly (Latency | null)[]): Latency | null {
  const have = list.filter((l): l is Latency => l !== null);
  if (have.length === 0) return null;
  const cpu = have.map((l) => l.cpuPerStep).filter((c): c is CpuPerStep => c !== undefined);
  return {
    stepP50: median(have.map((l) => l.stepP50)),
    stepP99: median(have.map((l) => l.stepP99)),
    firstP50: median(have.map((l) => l.firstP50)),
    firstP99: median(have.map((l) => l.firstP99)),
    load: have.length > 1 ? `${have[0]!.load} (median of rates)` : have[0]!.load,
    ...(cpu.length > 0
      ? {
          cpuPerStep: {
            server: median(cpu.map((c) => c.server)),
            workers: median(cpu.map((c) => c.workers)),
            postgres: median(cpu.map((c) => c.postgres)),
          },
        }
      : {}),
  };
}

/**
 * The embedded path's figures over the server path's, for one workload (1.5: the embedded path's figure
 * is half as large again). Latencies are the paced phase's (the burst's when it was skipped); CPU is all
 * processes and PostgreSQL together; RSS is the embedded process against the server process.
 */
export interface PathRatio {
  readonly workload: string;
  readonly stepsPerSec: number;
  readonly runsPerSec: number;
  readonly stepP50: number;
  readonly stepP99: number;
  readonly firstP50: number;
  readonly firstP99: number;
  readonly commitsPerStep: number;
  readonly statementsPerStep: number;
  readonly walBytesPerStep: number;
  readonly cpuMsPerStep: number;
  readonly rssMb: number;
}

/** embedded / server for one workload's summaries. */
export function pathRatio(server: Measurement, embedded: Measurement): PathRatio {
  const r = (e: number, s: number) => e / s;
  const ls = server.paced ?? server.burst;
  const le = embedded.paced ?? embedded.burst;
  const cpu = (m: Measurement) => m.cpuPerStep.server + m.cpuPerStep.workers + m.cpuPerStep.postgres;
  return {
    workload: server.workload,
    stepsPerSec: r(embedded.stepsPerSec, server.stepsPerSec),
    runsPerSec: r(embedded.runsPerSec, server.runsPerSec),
    stepP50: r(le.stepP50, ls.stepP50),
    stepP99: r(le.stepP99, ls.stepP99),
    firstP50: r(le.firstP50, ls.firstP50),
    firstP99: r(le.firstP99, ls.firstP99),
    commitsPerStep: r(embedded.commitsPerStep, server.commitsPerStep),
    statementsPerStep: r(embedded.statementsPerStep, server.statementsPerStep),
    walBytesPerStep: r(embedded.walBytesPerStep, server.walBytesPerStep),
    cpuMsPerStep: r(cpu(embedded), cpu(server)),
    rssMb: r(embedded.serverRssMb, server.serverRssMb),
  };
}
