import type postgres from 'postgres';
import { measureBurst } from './burst.js';
import { startEmbeddedChild } from './embedded-child.js';
import { LatencyPhases, TimingSink } from './phases.js';
import { latencyPhases, type Measurement, measurement } from './run-workload.js';
import { peakRss } from './stats.js';
import type { Workload } from './workloads.js';

/** How to run a workload on the embedded path. */
export interface EmbeddedRunOptions {
  readonly databaseUrl: string;
  readonly admin: postgres.Sql;
  /** Tasks the in-process executor runs at once (the server path's workers x concurrency by default). */
  readonly concurrency: number;
  readonly pacedShare: number;
  readonly fixedStepsPerSec: number;
  readonly fewRuns: number;
  readonly progress: (line: string) => void;
}

/**
 * Runs one workload on the embedded path: Weft as a library (createEngine on a PgStore) in a process of
 * its own, the no-op handlers run by its in-process executor, runs started in that process and their
 * results awaited there. The same warm-up and phases as the server path (runWorkload), on the same
 * clock: start times and handler timings are taken in the one process, and the burst ends when its last
 * run is seen completed in PostgreSQL.
 */
export async function runEmbedded(workload: Workload, o: EmbeddedRunOptions): Promise<Measurement> {
  const child = await startEmbeddedChild(
    o.databaseUrl,
    `bench-${workload.id.toLowerCase()}`,
    o.concurrency,
    workload.input,
  );
  try {
    await child.deploy(workload.yaml);
    const target = {
      starter: child,
      workload,
      sink: new TimingSink([child]),
      admin: o.admin,
      serverPid: child.child.pid!,
      workers: [],
      progress: o.progress,
    };
    const phases = new LatencyPhases(target);
    await phases.warmUp();
    const burst = await measureBurst(target, phases, () => child.counters());
    const rest = await latencyPhases(phases, workload, burst, o);
    const memory = { server: await peakRss(child.child.pid!), worker: 0, workerPrivate: 0 };
    return measurement('embedded', workload, burst, rest, memory);
  } finally {
    await child.stop();
  }
}
