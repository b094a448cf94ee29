import type { Json } from '../json.js';

/**
 * Something a decision wants done outside the run. The decider never does it: it emits an `effect` action,
 * the shell writes it to the outbox in the decision's own transaction, and a relay delivers it after commit
 * (invariant 7: nothing observable escapes before commit).
 */
export type Effect =
  /** Start a run of a definition, as a child that reports back (`detached` false) or fire and forget. */
  | {
      readonly kind: 'start_run';
      readonly runId: string;
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
  /** Publish a message to a sink configured on the server. */
  | {
      readonly kind: 'publish';
      readonly sink: string;
      readonly topic: string | null;
      readonly message: EventMessage;
    };

/** The envelope of every message Weft publishes: a stable id for consumers to deduplicate redeliveries. */
export interface EventMessage {
  /** Stable across redeliveries: derived from the identity of what produced it. */
  readonly id: string;
  /** The node's topic, `run.completed`, ... */
  readonly type: string;
  /** When the decision that produced it was taken (ISO 8601). */
  readonly time: string;
  readonly source: {
    readonly namespace?: string;
    readonly run_id: string;
    readonly definition: string;
    readonly version: number;
    readonly node_id?: string;
    readonly iteration?: string;
    readonly attempt?: number;
  };
  readonly data: Json;
}

/** The kinds of effect. */
export type EffectKind = Effect['kind'];
