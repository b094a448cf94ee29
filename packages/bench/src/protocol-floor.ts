import { WeftClient } from '@weft/client';
import type postgres from 'postgres';
import { type Latency, LatencyPhases, serverStarter, TimingSink } from './phases.js';
import { startFloorServer, startWorker, type WorkerProcess } from './processes.js';
import type { Workload } from './workloads.js';

/** The protocol floor's latencies, phase by phase (null where the phase was skipped). */
export interface ProtocolFloor {
  readonly paced: Latency | null;
  readonly fixed: Latency | null;
  readonly few: Latency | null;
}

/** How to measure the protocol floor. */
export interface ProtocolFloorOptions {
  readonly databaseUrl: string;
  readonly admin: postgres.Sql;
  readonly port: number;
  readonly workers: number;
  readonly concurrency: number;
  /** Runs a second for the paced phase (Weft's own paced rate, so both see the same load; 0 skips it). */
  readonly pacedRunsPerSec: number;
  readonly fixedStepsPerSec: number;
  readonly fewRuns: number;
  readonly progress: (line: string) => void;
}

/**
 * The protocol floor: W2's latency phases with the same worker processes, the same HTTP client and the
 * same arrivals as Weft, against a server that does only the least SQL a step needs (see
 * floor-server.ts): one statement and one commit a report, fenced, with the next attempt handed to the
 * reporting worker. What it measures is the latency this machine allows any engine with Weft's process
 * layout and guarantees (a worker process, a server process, PostgreSQL committing synchronously), with
 * no engine at all.
 */
export async function measureProtocolFloor(
  workload: Workload,
  o: ProtocolFloorOptions,
): Promise<ProtocolFloor> {
  const server = await startFloorServer(o.databaseUrl, o.port);
  const workers: WorkerProcess[] = [];
  const client = new WeftClient({ url: server.url, connections: 32 });
  try {
    for (let i = 0; i < o.workers; i++)
      workers.push(await startWorker(server.url, `floor-${i + 1}`, o.concurrency));
    const phases = new LatencyPhases({
      starter: serverStarter(client, 'bench-w2'),
      workload,
      sink: new TimingSink(workers),
      admin: o.admin,
      serverPid: server.child.pid!,
      workers,
      progress: o.progress,
    });
    // The same warm-up as Weft's.
    await phases.warmUp();
    const paced = o.pacedRunsPerSec > 0 ? await phases.paced(o.pacedRunsPerSec) : null;
    const fixed =
      o.fixedStepsPerSec > 0
        ? await phases.paced(o.fixedStepsPerSec / workload.steps, o.fixedStepsPerSec)
        : null;
    const few = o.fewRuns > 0 ? await phases.few(o.fewRuns) : null;
    return { paced, fixed, few };
  } finally {
    await client.close();
    await Promise.all(workers.map((w) => w.stop()));
    await server.stop();
  }
}
