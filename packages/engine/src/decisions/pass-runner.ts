import type { DispatchMode } from '../dispatch/dispatch-mode.js';
import type { Dispatcher } from '../dispatch/dispatcher.js';
import type { Extensions } from '../extensions/extensions.js';
import type { BlobUses } from '../payloads/blob-uses.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { Store, StoreTx } from '../store/store.js';
import type { Logger } from '../support/logger.js';
import type { EngineStats } from '../support/stats.js';
import { type DecisionTrace, recordDecision } from '../tracing/decision-spans.js';
import type { Wakeups } from '../wakeups/wakeups.js';
import type { Cascader } from './cascade.js';
import type { EagerSlot, Gating } from './hand-over.js';
import type { HumanTaskSinks } from './human-task-events.js';
import { Pass } from './pass.js';

/** What the passes of an engine are built from. */
export interface PassSetup {
  readonly store: Store;
  /** How dispatch and the store's transactions fit together, settled at construction. */
  readonly dispatchMode: DispatchMode;
  readonly dispatcher: Dispatcher;
  /** The gate (with one, no task is handed straight to a worker) and what a pass reports to after commit. */
  readonly extensions: Extensions;
  readonly cascader: Cascader;
  readonly gating: Gating;
  readonly payloads: PayloadStore;
  /** Polls waiting in this process (a pass may hand them tasks), and whom to wake after commit. */
  readonly wakeups: Wakeups;
  readonly stats: EngineStats;
  readonly logger: Logger;
  /** The lease a task handed straight to a waiting poll gets. */
  readonly leaseMs: number;
  /** Which sinks hear of human task changes, per namespace. */
  readonly humanTaskSinks?: HumanTaskSinks;
}

/**
 * Runs store transactions, each with a pass of its own: how every service and loop that decides writes
 * its decisions.
 */
export class PassRunner {
  constructor(private readonly setup: PassSetup) {}

  /**
   * Runs `fn` in a store transaction with a pass of its own. A transaction may be retried (deadlock,
   * serialisation failure) and each attempt gets a fresh pass; the poll slots reserved by attempts that did
   * not commit are given back. The caller calls `committed` with the returned pass. The transaction's span
   * (`weft.decide <source>`) is recorded once it is over (see recordDecision). `blobs`, the large payloads
   * offloaded before the transaction for the rows it writes, are guarded first thing in it (invariant 30).
   */
  async run<T>(
    eager: EagerSlot | null,
    fn: (tx: StoreTx, pass: Pass) => Promise<T>,
    decision: DecisionTrace = { source: 'unknown' },
    blobs?: BlobUses,
  ): Promise<{ result: T; pass: Pass }> {
    const ctx = this.setup;
    const created: Pass[] = [];
    const began = performance.now();
    const startedAt = Date.now();
    try {
      const body = async (tx: StoreTx, handle?: unknown) => {
        // With a gate, every task is claimed through a lease path that asks it first: none is handed over.
        const gated = ctx.extensions.gate !== null;
        const pass = new Pass(
          ctx.dispatcher,
          gated ? null : eager,
          gated ? null : { polls: ctx.wakeups.polls, leaseMs: ctx.leaseMs, stats: ctx.stats },
          ctx.cascader,
          { gating: ctx.gating, payloads: ctx.payloads },
          {
            extensions: ctx.extensions,
            logger: ctx.logger,
            meter: ctx.stats.meter,
            ...(ctx.humanTaskSinks ? { humanTaskSinks: ctx.humanTaskSinks } : {}),
          },
        );
        pass.handle = handle;
        created.push(pass);
        if (blobs) await blobs.guard(tx, ctx.payloads);
        return { result: await fn(tx, pass), pass };
      };
      const mode = ctx.dispatchMode;
      const out =
        mode.kind === 'in_transaction'
          ? await mode.store.runInTransaction((scope) => body(scope.tx, scope.handle))
          : await ctx.store.transaction(body);
      for (const p of created) if (p !== out.pass) p.release();
      if (out.pass.decidedAny)
        ctx.stats.meter.decisionPass((performance.now() - began) / 1000, out.pass.changed);
      recordDecision(decision, startedAt, out.pass.decided, null);
      return out;
    } catch (e) {
      for (const p of created) p.release();
      recordDecision(decision, startedAt, created.at(-1)?.decided ?? new Map(), e);
      throw e;
    }
  }

  /** Once the pass's transaction has committed: hands over its tasks and wakes whoever waits (see Pass). */
  committed(pass: Pass): Promise<void> {
    return pass.afterCommit(this.setup.wakeups);
  }
}
