/** What a gate is asked: may a step of this type (and, when known, this attempt) start now? */
export interface GateRequest {
  readonly namespace: string;
  /** The task type; null when a message named the attempt without its type. */
  readonly taskType: string | null;
  readonly worker: string;
  /** The attempt, when the engine knows it before the claim (a lease by id); null on the table poll path. */
  readonly task: { readonly runId: string; readonly taskId: string; readonly attempt: number } | null;
}

/**
 * A gate's answer: admit with a `release` the engine calls exactly once when the slot is free again (the
 * claim was lost, or the attempt completed, failed or lost its lease), or defer: the step stays queued and
 * is offered again after `retryAfterMs`.
 */
export type GateDecision =
  | { readonly kind: 'admit'; readonly release: () => void | Promise<void> }
  | { readonly kind: 'defer'; readonly retryAfterMs: number };

/**
 * Consulted before a step is claimed, on every lease path: org-wide caps, a shared token bucket, a
 * downstream circuit breaker. Weft's own limits (semaphores, rate limits, caps in the limits table) are
 * enforced in the store and need no gate. The release is held by the process that acquired the slot.
 */
export interface Gate {
  acquire(request: GateRequest): GateDecision | Promise<GateDecision>;
}
