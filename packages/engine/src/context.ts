import type { Cascader } from './decisions/cascade.js';
import type { Evaluator } from './decisions/evaluator.js';
import type { Gating } from './decisions/pass.js';
import type { DispatchMode } from './dispatch/dispatch-mode.js';
import type { Dispatcher } from './dispatch/dispatcher.js';
import type { Extensions } from './extensions/extensions.js';
import type { Destinations } from './outbox/destination.js';
import type { PayloadStore } from './payloads/payload-store.js';
import type { DefinitionService } from './services/definitions.js';
import type { LimitBook } from './services/limits.js';
import type { RunIndex } from './services/run-index.js';
import type { Store } from './store/store.js';
import type { EngineConfig } from './support/config.js';
import type { Logger } from './support/logger.js';
import type { EngineStats } from './support/stats.js';
import type { Wakeups } from './wakeups/wakeups.js';

/** What the engine's services share. */
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
}
