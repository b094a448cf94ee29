import type { Pass } from '../decisions/pass.js';
import type { Delivery, OutboxRow } from '../store/outbox-records.js';
import type { StoreTx } from '../store/store.js';

/** What a destination gets with the rows it delivers: the relay's transaction, for deliveries into it. */
export interface DeliveryContext {
  /** The transaction that claimed the rows and will mark them; a rollback redelivers them. */
  readonly tx: StoreTx;
  /** Decisions taken while delivering (a child run's first step) are written with this pass. */
  readonly pass: Pass;
}

/**
 * Where outbox rows go: a sink, a webhook, a queue, or the engine itself. `deliver` answers one
 * `Delivery` per row, in order; a failure of one row must not fail the others. Delivery is at least
 * once, so whatever it does must tolerate a repeat of the same message id.
 */
export interface Destination {
  /** Matches the `destination` of the rows it delivers (`sink:orders`, `weft.webhook`, ...). */
  readonly name: string;
  /** Longest a batch may take before its rows count as failed (none for deliveries inside PostgreSQL). */
  readonly timeoutMs?: number;
  deliver(rows: readonly OutboxRow[], context: DeliveryContext): Promise<Delivery[]>;
  /** Releases connections. */
  close?(): Promise<void>;
}

/** The destinations a relay knows, by name. Rows for a name not here are kept, backing off, never dropped. */
export class Destinations {
  private readonly byName = new Map<string, Destination>();

  /** Adds (or replaces) a destination. */
  register(destination: Destination): void {
    this.byName.set(destination.name, destination);
  }

  get(name: string): Destination | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** Closes every destination that holds connections. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.byName.values()].map((d) => d.close?.()));
  }
}

/** Turns a thrown error into a failed delivery message. */
export function failureOf(error: unknown): Delivery {
  return { kind: 'failed', error: error instanceof Error ? error.message : String(error) };
}
