import { type EngineMeter, silentMeter } from './meter.js';

/**
 * Counters of what the engine has done since it started, for metrics and for the benchmark. Plain numbers:
 * the server exposes them in Prometheus format; nothing in the engine reads them back.
 */
export class EngineStats {
  /** Runs started. */
  runsStarted = 0;
  /** Events decided (a run's start, a report, a timer, an operator action...). */
  eventsDecided = 0;
  /** Node instances read to decide them: the cost of deciding, which follows the frontier. */
  instancesRead = 0;
  /** Worker reports applied, and refused (stale token or attempt, finished task, past deadline). */
  reportsAccepted = 0;
  reportsRefused = 0;
  /**
   * Heartbeats refused (stale lease, wrong attempt, finished task): answered `lost` and counted here, not
   * written to history, where the ordinary races between a worker's heartbeats and its report would bury
   * the refusals that matter.
   */
  heartbeatsRefused = 0;
  /** Tasks leased from the queue by a poll, handed to the reporting worker, or handed to a waiting poll. */
  leasedByPoll = 0;
  leasedWithReport = 0;
  leasedByHandover = 0;
  /** Background decisions that failed and were put back with a backoff. */
  decisionsDeferred = 0;
  /** Statements sent to PostgreSQL, when the store's connections count them (the server's do). */
  statementsSent = 0;
  /** Where labelled measurements go (runs by definition, durations): set by whoever serves metrics. */
  meter: EngineMeter = silentMeter;
  /** Finished runs deleted by retention (the loop or a purge by hand), and of those, archived first. */
  runsPurged = 0;
  runsArchived = 0;
  /** Blobs of purged runs deleted from the blob store, and deletions the blob store failed. */
  blobsDeleted = 0;
  blobDeleteFailures = 0;
}
