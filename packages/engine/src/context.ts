import type { Cascader } from './cascade.js';
import type { EngineConfig } from './config.js';
import type { DefinitionService } from './definitions.js';
import type { Dispatcher } from './dispatcher.js';
import type { Evaluator } from './evaluator.js';
import type { Extensions } from './extensions/extensions.js';
import type { DispatchMode } from './extensions/transactional-dispatch.js';
import type { LimitBook } from './limits.js';
import type { Logger } from './logger.js';
import type { Destinations } from './outbox/destination.js';
import type { Gating } from './pass.js';
import type { PayloadStore } from './payloads/payload-store.js';
import type { RunIndex } from './run-index.js';
import type { EngineStats } from './stats.js';
import type { Store } from './store.js';
import type { Wakeups } from './wakeups.js';

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
