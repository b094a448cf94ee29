/** Engine settings. Every duration is in milliseconds. */
export interface EngineConfig {
  /** How long a lease lasts without a heartbeat. */
  readonly leaseMs: number;
  /** How often workers should renew their leases (told to them with each lease). */
  readonly heartbeatMs: number;
  /** Longest a worker's poll may wait for a task. */
  readonly maxPollWaitMs: number;
  /** How often background loops look when nothing woke them. */
  readonly decidePollMs: number;
  readonly timerPollMs: number;
  readonly leasePollMs: number;
  /** Runs decided per background transaction. */
  readonly decideBatch: number;
  /** Background decision transactions in flight at once. */
  readonly decideConcurrency: number;
  /** Publish wake-ups to other server processes through the store (LISTEN/NOTIFY on PostgreSQL). */
  readonly crossProcessWakeups: boolean;
  /** Run the background loops (decisions, timers, lease expiry, outbox relay, schedules, sweeper) here. */
  readonly backgroundLoops: boolean;
  /** The stuck-run sweeper: how often it looks, and how long a run must be idle to count as stuck. */
  readonly sweepPollMs: number;
  readonly sweepIdleMs: number;
  /** How often the schedule loop looks for due schedules. */
  readonly schedulePollMs: number;
  /** Payloads larger than this go to the blob store. */
  readonly payloadThresholdBytes: number;
  /** Payloads larger than this are refused. */
  readonly maxPayloadBytes: number;
  /** How often the outbox relay looks when nothing woke it. */
  readonly relayPollMs: number;
  /** Outbox rows claimed per destination per relay transaction. */
  readonly relayBatch: number;
  /** Destinations delivered at once by one relay. */
  readonly relayConcurrency: number;
  /** Failed deliveries of one row before it becomes a dead letter. */
  readonly relayMaxAttempts: number;
  /** Backoff after a row's first failed delivery; doubles with each failure up to the cap. */
  readonly relayBackoffMs: number;
  readonly relayMaxBackoffMs: number;
  /** Run the system-task runner (built-in `http` tasks) in this process. */
  readonly systemTasks: boolean;
  /** System tasks run at once by this process. */
  readonly systemConcurrency: number;
  /**
   * With a dispatcher that enqueues after commit: how often the repair looks for queued tasks left
   * without a message (a crash between commit and enqueue), and how long a task must have been queued
   * before it is sent again. A duplicate message is harmless (leases are fenced).
   */
  readonly redispatchPollMs: number;
  readonly redispatchAfterMs: number;
  /** Retention: how often the purge loop looks for finished runs past their policy's period. */
  readonly retentionPollMs: number;
  /** Runs deleted per purge transaction: small, so a purge never holds many locks or a long transaction. */
  readonly purgeBatch: number;
  /**
   * Buckets the values of a node's `limit_key` fold into (by a hash): at most this many keys are live per
   * limit, whatever the data. Set the same on every server.
   */
  readonly limitKeys: number;
  /**
   * The retention loop's pause after a full batch before the next: a large backlog is deleted at a steady
   * pace that leaves the database to the runs (see the benchmark's purge phase), not as fast as it can.
   */
  readonly purgePauseMs: number;
  /** Listed blobs of purged runs the blob deleter takes per transaction (it runs as often as retention). */
  readonly blobDeleteBatch: number;
  /** Backoff after the blob store fails to delete a blob: doubles with each failure, up to the maximum. */
  readonly blobDeleteBackoffMs: number;
  readonly blobDeleteMaxBackoffMs: number;
}

/** Defaults: 90 s leases renewed every 30 s. */
export const DEFAULT_CONFIG: EngineConfig = {
  leaseMs: 90_000,
  heartbeatMs: 30_000,
  maxPollWaitMs: 30_000,
  decidePollMs: 500,
  timerPollMs: 250,
  leasePollMs: 1000,
  decideBatch: 50,
  decideConcurrency: 2,
  crossProcessWakeups: true,
  backgroundLoops: true,
  sweepPollMs: 60_000,
  sweepIdleMs: 5 * 60_000,
  schedulePollMs: 1000,
  payloadThresholdBytes: 256 * 1024,
  maxPayloadBytes: 16 * 1024 * 1024,
  relayPollMs: 500,
  relayBatch: 100,
  relayConcurrency: 4,
  relayMaxAttempts: 10,
  relayBackoffMs: 1000,
  relayMaxBackoffMs: 300_000,
  systemTasks: true,
  systemConcurrency: 16,
  redispatchPollMs: 5000,
  redispatchAfterMs: 30_000,
  retentionPollMs: 60_000,
  purgeBatch: 500,
  limitKeys: 1000,
  purgePauseMs: 250,
  blobDeleteBatch: 100,
  blobDeleteBackoffMs: 10_000,
  blobDeleteMaxBackoffMs: 3_600_000,
};
