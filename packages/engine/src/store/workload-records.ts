/** Tasks waiting on the queue of one namespace and task type. */
export interface QueuedCount {
  readonly namespace: string;
  readonly taskType: string;
  /** Queued tasks that are due (a retry waiting out its backoff is not counted). */
  readonly queued: number;
  /** Seconds since the oldest due task became due; 0 with none. */
  readonly oldestAgeSeconds: number;
}

/**
 * What is waiting and running across the store, read for metrics at scrape time: queued and running tasks,
 * the outbox per destination, open human tasks and due timers.
 */
export interface WorkloadSnapshot {
  readonly queued: readonly QueuedCount[];
  /** Attempts held by a worker, per task type. */
  readonly running: readonly { readonly taskType: string; readonly count: number }[];
  /** Outbox rows waiting for delivery and dead-lettered, per destination. */
  readonly outbox: readonly {
    readonly destination: string;
    readonly pending: number;
    readonly dead: number;
  }[];
  /** Human tasks waiting for an answer, per namespace. */
  readonly humanTasksOpen: readonly { readonly namespace: string; readonly count: number }[];
  /** Timers whose time has come and that have not fired yet. */
  readonly timersDue: number;
  /** Blobs of purged runs waiting to be deleted, and those whose deletion has failed (stores that delete). */
  readonly blobDeletions?: { readonly listed: number; readonly failing: number };
}
