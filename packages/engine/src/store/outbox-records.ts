import type { EventMessage, Json } from '@weft/core';

/**
 * The transactional outbox (invariant 7): every effect that leaves a run is a row written in the transaction
 * of the change it describes, and a relay delivers it after commit, at least once.
 */

/** Effects on other runs: child starts, cancel cascades, parent wake-ups. Delivered inside PostgreSQL. */
export const RUNS_DESTINATION = 'weft.runs';
/** Run status callbacks to a URL named by a definition. */
export const WEBHOOK_DESTINATION = 'weft.webhook';
/** Task messages for an external queue (the Redis dispatcher). */
export const TASKS_DESTINATION = 'weft.tasks';

/** The destination of messages for a sink configured on the server. */
export function sinkDestination(sink: string): string {
  return `sink:${sink}`;
}

/** What an outbox row asks for. The row's `kind` column is the payload's `kind`. */
export type OutboxPayload =
  | {
      readonly kind: 'start_run';
      readonly runId: string;
      readonly namespace: string;
      readonly definition: string;
      readonly version: number | null;
      readonly input: Json;
      readonly parent: {
        readonly runId: string;
        readonly nodeId: string;
        readonly iteration: string;
        readonly attempt: number;
      };
      readonly detached: boolean;
    }
  | {
      readonly kind: 'cancel_run';
      readonly runId: string;
      readonly by: string;
      readonly reason: string;
      /** Terminate rather than cancel (the parent was terminated). */
      readonly mode?: 'cancel' | 'terminate';
    }
  | { readonly kind: 'wake_run'; readonly runId: string; readonly reason: string }
  | { readonly kind: 'publish'; readonly topic: string | null; readonly message: EventMessage }
  | { readonly kind: 'webhook'; readonly url: string; readonly message: EventMessage }
  | {
      readonly kind: 'task_message';
      readonly taskId: string;
      readonly runId: string;
      readonly attempt: number;
      readonly namespace: string;
      readonly taskType: string;
      readonly priority: number;
    };

/** The kinds of outbox payload. */
export type OutboxKind = OutboxPayload['kind'];

/** An outbox row to write. */
export interface OutboxWrite {
  /** The run whose change produced the row. */
  readonly runId: string;
  readonly namespace: string;
  /**
   * The attempt the row belongs to, if any: the row is written only if that task row exists, so an
   * effect of an insert absorbed as a duplicate is dropped with it (no second child, no second message).
   */
  readonly taskId: string | null;
  readonly destination: string;
  /** Stable across redeliveries and replays; consumers deduplicate on it. */
  readonly messageId: string;
  readonly payload: OutboxPayload;
}

/** An outbox row as stored: waiting for delivery (`pending`) or given up on (`dead`, kept for replay). */
export interface OutboxRow extends OutboxWrite {
  readonly id: string;
  readonly status: 'pending' | 'dead';
  /** Failed deliveries so far. */
  readonly attempts: number;
  readonly nextAttemptAt: Date;
  readonly lastError: string | null;
  readonly createdAt: Date;
  readonly deadAt: Date | null;
}

/**
 * What became of delivering one row. A permanent failure goes straight to the dead letters. `repeat`:
 * delivered, and to be delivered again after `afterMs` unless the row is removed meanwhile (a task
 * message is announced again until its task is leased, in case the queue lost it).
 */
export type Delivery =
  | { readonly kind: 'delivered' }
  | { readonly kind: 'repeat'; readonly afterMs: number }
  | { readonly kind: 'failed'; readonly error: string; readonly permanent?: boolean };

/** How failed deliveries back off, and when a row becomes a dead letter. */
export interface OutboxRetryPolicy {
  /** Failed deliveries after which a row is dead-lettered (10 by default). */
  readonly maxAttempts: number;
  /** Wait after the first failure; doubles with each one. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** A row's outcome, to settle. */
export interface OutboxOutcome {
  readonly runId: string;
  readonly id: string;
  readonly delivery: Delivery;
}

/** Which dead letters to list. */
export interface DeadLetterFilter {
  readonly namespace: string;
  readonly destination?: string;
  /** Opaque cursor from the previous page. */
  readonly cursor?: string;
  readonly limit: number;
}

/** Which dead letters to replay: by id, or every one of a destination (or all, with neither). */
export interface ReplaySelection {
  readonly namespace: string;
  readonly ids?: readonly string[];
  readonly destination?: string;
}
