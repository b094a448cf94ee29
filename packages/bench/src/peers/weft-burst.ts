import type postgres from 'postgres';
import { whenAllRunsClosed } from '../completion-watch.js';
import type { Timing } from '../phases.js';
import type { Workload } from '../workloads.js';
import { nowMs, type PeerRun } from './contender.js';

/** How a Weft contender starts runs and hands over its handlers' timings. */
export interface WeftBurstTarget {
  /** Starts `count` runs at once; each run's id and start time. */
  burst(count: number): Promise<Map<string, number>>;
  /** The handler timings recorded since the last call. */
  timings(): Promise<Timing[]>;
}

/**
 * Warms a Weft contender up with the `warm` bursts, each waited for, then times one burst of the workload's
 * runs from just before the first start to the moment no run is open in PostgreSQL; every run must have
 * completed.
 */
export async function timeWeftBurst(
  admin: postgres.Sql,
  workload: Workload,
  target: WeftBurstTarget,
  warm: readonly number[],
): Promise<PeerRun> {
  for (const runs of warm) {
    await target.burst(runs);
    await whenAllRunsClosed(admin);
  }
  await target.timings();

  const startedAt = nowMs();
  const sent = await target.burst(workload.runs);
  const endedAt = await whenAllRunsClosed(admin);
  const timings = await target.timings();
  const [row] = await admin<{ n: number }[]>`
    SELECT count(*)::int AS n FROM weft.runs WHERE status <> 'completed'`;
  if (row!.n > 0) throw new Error(`${row!.n} Weft run(s) failed during the burst`);
  return {
    runs: sent.size,
    steps: timings.filter((t) => sent.has(t[0])).length,
    wallMs: endedAt - startedAt,
  };
}
