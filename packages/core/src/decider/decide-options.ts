/** How the shell around the decider delivers work; the decider adapts what it emits. */
export interface DecideOptions {
  /**
   * A retry's backoff becomes a not-before time on the queued attempt, honoured by the dispatcher (the
   * dispatcher's delay contract; invariant 17), instead of a timer that queues the attempt when it fires. The
   * engine sets it when the dispatcher is a queue of one's own, so the queue is the delivery path for backoff
   * too.
   */
  readonly retryOnQueue?: boolean;
  /** Buckets limit keys fold into (see `limitKeyOf`): at most this many keys per limit. Default 1000. */
  readonly limitKeys?: number;
}
