import type { Cascader } from './decisions/cascade.js';
import { Evaluator } from './decisions/evaluator.js';
import type { Gating } from './decisions/hand-over.js';
import { HumanTaskSinks } from './decisions/human-task-events.js';
import { PassRunner } from './decisions/pass-runner.js';
import { type DispatchMode, negotiateDispatch } from './dispatch/dispatch-mode.js';
import { type Dispatcher, tableDispatcher } from './dispatch/dispatcher.js';
import type { EngineOptions } from './engine-options.js';
import { Extensions } from './extensions/extensions.js';
import { childRunCascader } from './outbox/child-cascade.js';
import { Destinations } from './outbox/destination.js';
import { FolderBlobStore } from './payloads/folder-blob-store.js';
import { PayloadStore } from './payloads/payload-store.js';
import { DefinitionService } from './services/definitions.js';
import { LimitBook, queueGates } from './services/limits.js';
import { RunIndex } from './services/run-index.js';
import type { Store } from './store/store.js';
import type { EngineConfig } from './support/config.js';
import { type Logger, silentLogger } from './support/logger.js';
import { EngineStats } from './support/stats.js';
import { Wakeups } from './wakeups/wakeups.js';

/**
 * The parts of one engine, built once (see `createContext`). Each service, loop and destination is
 * handed this and sees only the few parts its own interface names.
 */
export interface EngineContext {
  readonly store: Store;
  readonly dispatcher: Dispatcher;
  /** How dispatch and the store's transactions fit together, settled at construction. */
  readonly dispatchMode: DispatchMode;
  /** Gate, observer, tracer and hooks. */
  readonly extensions: Extensions;
  /** Stops what a run started beyond its own tasks and timers when its open work is cancelled. */
  readonly cascader: Cascader;
  readonly config: EngineConfig;
  readonly definitions: DefinitionService;
  readonly evaluator: Evaluator;
  /** Runs store transactions, each with a pass that writes its decisions. */
  readonly passes: PassRunner;
  readonly wakeups: Wakeups;
  readonly logger: Logger;
  readonly runs: RunIndex;
  readonly stats: EngineStats;
  /** Which task types are capped, as last seen (for eager dispatch only). */
  readonly limits: LimitBook;
  readonly gating: Gating;
  /** Large inputs and outputs, offloaded to a blob store. */
  readonly payloads: PayloadStore;
  /** Where the outbox relay delivers, by destination name. */
  readonly destinations: Destinations;
  /** Which sinks hear of human task changes, per namespace. */
  readonly humanTaskSinks: HumanTaskSinks;
}

/** Builds the parts of an engine from its options and settings. */
export function createContext(options: EngineOptions, config: EngineConfig): EngineContext {
  const store = options.store;
  const definitions = new DefinitionService(store);
  const stats = new EngineStats();
  const payloads = new PayloadStore(options.blobs ?? new FolderBlobStore('.weft/blobs'), {
    thresholdBytes: config.payloadThresholdBytes,
    maxBytes: config.maxPayloadBytes,
  });
  const limits = new LimitBook(store);
  const dispatcher = options.dispatcher ?? tableDispatcher;
  const logger = options.logger ?? silentLogger;
  const dispatchMode = negotiateDispatch(store, dispatcher);
  const extensions = new Extensions(options, logger);
  const cascader = options.cascader ?? childRunCascader;
  const wakeups = new Wakeups();
  const gating: Gating = {
    gatesOf: (run, nodeId, limitKey) => {
      const node = definitions.cached(run.definitionId)?.node(nodeId);
      return node?.kind === 'task' || node?.kind === 'http' ? queueGates(node, limitKey) : null;
    },
    isCapped: (namespace, taskType) => limits.isCapped(namespace, taskType),
  };
  const evaluator = new Evaluator(definitions, stats, payloads);
  // With a queue of its own, a retry waits out its backoff on the dispatcher (a not-before time), not on
  // a timer.
  evaluator.decideOptions = { retryOnQueue: dispatchMode.kind !== 'rows', limitKeys: config.limitKeys };
  const humanTaskSinks = new HumanTaskSinks(options.humanTaskSinks);
  const passes = new PassRunner({
    store,
    dispatchMode,
    dispatcher,
    extensions,
    cascader,
    gating,
    payloads,
    wakeups,
    stats,
    logger,
    leaseMs: config.leaseMs,
    humanTaskSinks,
  });
  return {
    store,
    dispatcher,
    dispatchMode,
    extensions,
    cascader,
    config,
    definitions,
    evaluator,
    passes,
    wakeups,
    logger,
    runs: new RunIndex(),
    stats,
    limits,
    gating,
    payloads,
    destinations: new Destinations(),
    humanTaskSinks,
  };
}
