import type { PassRunner } from '../decisions/pass-runner.js';
import type { Delivery, OutboxOutcome, OutboxRetryPolicy, OutboxRow } from '../store/outbox-records.js';
import type { Store } from '../store/store.js';
import type { EngineConfig } from '../support/config.js';
import { fault } from '../support/faults.js';
import type { Logger } from '../support/logger.js';
import { recordDelivery } from '../tracing/outbox-spans.js';
import { type Destinations, failureOf } from './destination.js';

/** The relay's settings. */
export type RelayConfig = Pick<
  EngineConfig,
  'relayBatch' | 'relayConcurrency' | 'relayMaxAttempts' | 'relayBackoffMs' | 'relayMaxBackoffMs'
>;

/** What the outbox relay uses. */
export interface RelayDeps {
  readonly store: Store;
  readonly passes: PassRunner;
  /** Where rows go, by destination name. */
  readonly destinations: Destinations;
  readonly logger: Logger;
  readonly config: RelayConfig;
}

/** The relay's retry policy, from the engine settings. */
export function relayPolicy(config: RelayConfig): OutboxRetryPolicy {
  return {
    maxAttempts: config.relayMaxAttempts,
    baseDelayMs: config.relayBackoffMs,
    maxDelayMs: config.relayMaxBackoffMs,
  };
}

/**
 * The outbox relay of one process. Each destination with rows due is drained on its own, in transactions
 * of its own, and the relay never waits for one destination before serving another: a slow or failing
 * destination holds only its own rows (test: "one failing destination does not stall the others"). Any
 * number of relays may run, in this process or others: each claims with SKIP LOCKED.
 */
export class Relay {
  private readonly inFlight = new Map<string, Promise<void>>();
  private stopped = false;

  /** `wake` is called when a destination's drain ends, so the caller looks for more work. */
  constructor(
    private readonly ctx: RelayDeps,
    private readonly wake: () => void = () => {},
  ) {}

  /**
   * Starts draining every destination with rows due that is not being drained already, up to the
   * concurrency setting, and returns without waiting for them.
   */
  async round(): Promise<boolean> {
    if (this.stopped) return false;
    const destinations = await this.ctx.store.outboxDestinations();
    for (const destination of destinations) {
      if (this.inFlight.has(destination) || this.inFlight.size >= this.ctx.config.relayConcurrency) continue;
      const draining = this.drain(destination).finally(() => {
        this.inFlight.delete(destination);
        if (!this.stopped) this.wake();
      });
      this.inFlight.set(destination, draining);
    }
    return false;
  }

  /** Stops starting deliveries and waits for those in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.inFlight.values()]);
  }

  private async drain(destination: string): Promise<void> {
    try {
      while (!this.stopped && (await deliverBatch(this.ctx, destination)) >= this.ctx.config.relayBatch) {}
    } catch (error) {
      this.ctx.logger.error(
        { destination, error: error instanceof Error ? error.message : String(error) },
        'outbox delivery failed; the rows will be tried again',
      );
    }
  }
}

/**
 * Claims, delivers and marks one batch of a destination's rows in one transaction (invariant 7): the claim
 * locks the rows (SKIP LOCKED, so relays never take the same row), the destination delivers them (inside this
 * transaction when the destination is the engine itself), and the marks commit with everything else. A crash
 * anywhere before commit leaves the rows pending and they are delivered again, with the same message id
 * (test: "the relay killed between delivery and mark redelivers, and the consumer sees the same id").
 *
 * A row whose destination no one registered is never marked delivered: it fails like any other delivery and
 * backs off, until it is delivered or becomes a dead letter (invariant 8; test: "an unregistered destination
 * backs off and dead-letters, and replay delivers it").
 *
 * Returns the number of rows claimed.
 */
export async function deliverBatch(ctx: RelayDeps, destination: string): Promise<number> {
  const policy = relayPolicy(ctx.config);
  let claimed: readonly OutboxRow[] = [];
  let delivered: readonly Delivery[] = [];
  const startedAt = Date.now();
  try {
    const { result, pass } = await ctx.passes.run(
      null,
      async (tx, pass) => {
        const rows = await tx.claimOutbox(destination, ctx.config.relayBatch);
        claimed = rows;
        if (rows.length === 0) return 0;
        const handler = ctx.destinations.get(destination);
        const deliveries: Delivery[] = handler
          ? await withTimeout(handler.deliver(rows, { tx, pass }), handler.timeoutMs, rows.length)
          : rows.map(() => unregistered(destination));
        if (deliveries.length !== rows.length)
          throw new Error(
            `destination ${destination} answered ${deliveries.length} deliveries for ${rows.length} rows`,
          );
        delivered = deliveries;
        await fault('relay.after-deliver');
        // The marks, then the pass's writes (a child's first step) and the commit, in one round trip.
        const settling = tx.settleOutbox(outcomes(rows, deliveries), policy);
        await Promise.all([settling, pass.finish(tx)]);
        return rows.length;
      },
      { source: 'relay' },
    );
    recordDelivery(destination, startedAt, claimed, { deliveries: delivered });
    await ctx.passes.committed(pass);
    return result;
  } catch (error) {
    recordDelivery(destination, startedAt, claimed, { error });
    // Nothing committed: the rows are still pending. Record the failure so they back off instead of being
    // retried at once (a crash here costs only that: they are retried sooner).
    if (claimed.length > 0) {
      const failure = failureOf(error);
      await ctx.store.transaction((tx) =>
        tx.settleOutbox(
          claimed.map((r) => ({ runId: r.runId, id: r.id, delivery: failure })),
          policy,
        ),
      );
    }
    throw error;
  }
}

function outcomes(rows: readonly OutboxRow[], deliveries: readonly Delivery[]): OutboxOutcome[] {
  return rows.map((row, i) => ({ runId: row.runId, id: row.id, delivery: deliveries[i]! }));
}

function unregistered(destination: string): Delivery {
  return {
    kind: 'failed',
    error: `no destination "${destination}" is registered on this server; configure it and the message will be delivered (it is kept until then)`,
  };
}

async function withTimeout(
  delivering: Promise<Delivery[]>,
  timeoutMs: number | undefined,
  count: number,
): Promise<Delivery[]> {
  if (timeoutMs === undefined) return delivering;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<Delivery[]>((resolve) => {
    timer = setTimeout(
      () =>
        resolve(
          Array.from({ length: count }, () => ({
            kind: 'failed' as const,
            error: `delivery took longer than ${timeoutMs} ms`,
          })),
        ),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([delivering, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
