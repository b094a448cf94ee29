import type postgres from 'postgres';
import { whenAllRunsClosed } from './completion-watch.js';
import type { EngineCounters } from './embedded-protocol.js';
import {
  type CpuPerStep,
  cpuDelta,
  cpuSnapshot,
  type LatencyPhases,
  type PhaseTarget,
  type Timing,
} from './phases.js';

/** What a burst gives, on either path. */
export interface BurstFigures {
  /** When each run was started. */
  readonly sentAt: Map<string, number>;
  readonly timings: Timing[];
  /** From the first start to the last run seen completed in PostgreSQL. */
  readonly wallMs: number;
  /** From the first start to the last handler's end (what wall time was before it ended in PostgreSQL). */
  readonly handlersMs: number;
  /** From the first start to the last awaited result in the caller's process (embedded path), or null. */
  readonly resultsMs: number | null;
  readonly commits: number;
  readonly walBytes: number;
  readonly cpuPerStep: CpuPerStep;
  /** The engine's counters over the burst. */
  readonly counters: EngineCounters;
}

/**
 * The burst: every run started at once. Wall time runs from the first start to the moment the last run is
 * seen completed in PostgreSQL (whenAllRunsClosed); commits, WAL and CPU are counted over the same span,
 * and over any results the path still awaits after it.
 */
export async function measureBurst(
  t: PhaseTarget,
  phases: LatencyPhases,
  counters: () => Promise<EngineCounters>,
): Promise<BurstFigures> {
  const { workload, admin } = t;
  const before = await pgStats(admin);
  const cpuBefore = await cpuSnapshot(t);
  const countersBefore = await counters();
  const sentAt = await t.starter.burst(workload.runs);
  const total = workload.runs * workload.steps;
  const [closedAt, timings] = await Promise.all([
    whenAllRunsClosed(admin),
    t.sink.await(sentAt, workload.steps, (done) => t.progress(`burst: ${done}/${total} steps`)),
  ]);
  const resultsAt = (await t.starter.settled?.()) ?? null;
  const cpuAfter = await cpuSnapshot(t);
  const countersAfter = await counters();
  await phases.finish(workload.runs);
  const after = await pgStats(admin);
  const started = Math.min(...sentAt.values());
  return {
    sentAt,
    timings,
    wallMs: closedAt - started,
    handlersMs: Math.max(...timings.map((x) => x[3])) - started,
    resultsMs: resultsAt === null ? null : resultsAt - started,
    commits: after.commits - before.commits,
    walBytes: after.walBytes - before.walBytes,
    cpuPerStep: cpuDelta(cpuBefore, cpuAfter, timings.length),
    counters: {
      events: countersAfter.events - countersBefore.events,
      reads: countersAfter.reads - countersBefore.reads,
      statements: countersAfter.statements - countersBefore.statements,
    },
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
