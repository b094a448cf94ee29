import { connect, freePort } from '@weft/postgres';
import { measureFloor } from './floor.js';
import { freshDatabase } from './fresh-database.js';
import type { BenchOptions } from './options.js';
import { measureProtocolFloor, type ProtocolFloor } from './protocol-floor.js';
import { median } from './stats.js';
import { medianLatency } from './summary.js';
import type { Workload } from './workloads.js';

/** The floors measured beside the workloads (null where skipped). */
export interface Floors {
  /** The SQL of a step alone, batched like Weft: steps a second. */
  readonly floor: number | null;
  /** The same with only `few` runs in flight: mean milliseconds a step. */
  readonly floorFewMs: number | null;
  /** W2's latency phases against a server with no engine: medians, and every sample. */
  readonly protocol: ProtocolFloor | null;
  readonly protocolSamples: ProtocolFloor[];
}

/**
 * Measures the SQL floor (and, when W2 is measured, its "few" shape and the protocol floor at W2's paced
 * rate on the server path, `w2RunsPerSec`).
 */
export async function measureFloors(
  baseUrl: string,
  o: BenchOptions,
  w2: Workload | null,
  w2RunsPerSec: number | null,
  log: (line: string) => void,
): Promise<Floors> {
  const size = (n: number) => o.runs ?? Math.max(1, Math.round(n * o.scale));
  const dbUrl = await freshDatabase(baseUrl, `${o.dbName}_floor`);
  log('floor: measuring the minimal SQL per step (10-step chain, batched like Weft, no engine logic)');
  const samples = await measureFloor(dbUrl, {
    runs: size(500),
    loops: o.workers * 2,
    batch: Math.max(1, Math.floor(o.concurrency / 2)),
    rounds: o.repeat,
  });
  let floorFewMs: number | null = null;
  if (o.few > 0 && w2) {
    // The same SQL with only a few runs in flight, one connection per worker process, as in the
    // "few" phase: the least a step's latency can be on this machine, with no HTTP and no engine.
    log(`floor: ${o.few} runs in flight over ${o.workers} connection(s)`);
    const batch = Math.max(1, Math.ceil(o.few / o.workers));
    const rates = await measureFloor(dbUrl, { runs: o.few, loops: o.workers, batch, rounds: 60 });
    floorFewMs = (o.few / median(rates)) * 1000;
  }
  const protocolSamples =
    w2 && w2RunsPerSec !== null ? await protocolFloorSamples(baseUrl, o, w2, w2RunsPerSec, log) : [];
  const protocol =
    protocolSamples.length > 0
      ? {
          paced: medianLatency(protocolSamples.map((p) => p.paced)),
          fixed: medianLatency(protocolSamples.map((p) => p.fixed)),
          few: medianLatency(protocolSamples.map((p) => p.few)),
        }
      : null;
  return { floor: median(samples), floorFewMs, protocol, protocolSamples };
}

/** W2's latency phases against a server with no engine, `--repeat` times: what the machine allows this layout. */
async function protocolFloorSamples(
  baseUrl: string,
  o: BenchOptions,
  w2: Workload,
  w2RunsPerSec: number,
  log: (line: string) => void,
): Promise<ProtocolFloor[]> {
  const samples: ProtocolFloor[] = [];
  for (let i = 0; i < o.repeat; i++) {
    const url = await freshDatabase(baseUrl, `${o.dbName}_protocol`);
    const admin = connect(url, { max: 1, applicationName: 'weft-bench' });
    const label = `protocol floor (W2, no engine) ${i + 1}/${o.repeat}`;
    try {
      log(`${label}: running`);
      samples.push(
        await measureProtocolFloor(w2, {
          databaseUrl: url,
          admin,
          port: await freePort(),
          workers: o.workers,
          concurrency: o.concurrency,
          pacedRunsPerSec: w2RunsPerSec * o.pacedShare,
          fixedStepsPerSec: o.rate,
          fewRuns: o.few,
          progress: (line) => log(`${label}: ${line}`),
        }),
      );
    } finally {
      await admin.end();
    }
  }
  return samples;
}
