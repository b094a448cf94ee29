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
  /** Run the background loops (decisions, timers, lease expiry) in this process. */
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
};
