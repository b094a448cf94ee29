import type { Cascader } from './decisions/cascade.js';
import type { Dispatcher } from './dispatch/dispatcher.js';
import type { Gate } from './extensions/gate.js';
import type { Hooks } from './extensions/hooks.js';
import type { Observer } from './extensions/observer.js';
import type { Tracer } from './extensions/tracer.js';
import type { Outbound } from './outbound/outbound.js';
import type { Destination } from './outbox/destination.js';
import type { BlobStore } from './payloads/blob-store.js';
import type { SecretKeys } from './secrets/secret-box.js';
import type { SecretStore } from './secrets/secret-store.js';
import type { Store } from './store/store.js';
import type { Clock } from './support/clock.js';
import type { EngineConfig } from './support/config.js';
import type { Logger } from './support/logger.js';
import type { TaskLogStore } from './task-logs/task-log-store.js';

/** What an engine is built from. Only the store is required. */
export interface EngineOptions {
  readonly store: Store;
  readonly dispatcher?: Dispatcher;
  /** Stops what runs started beyond their own tasks; by default their child runs (childRunCascader). */
  readonly cascader?: Cascader;
  readonly config?: Partial<EngineConfig>;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Where large payloads go; a folder `.weft/blobs` under the working directory by default. */
  readonly blobs?: BlobStore;
  /** Where the outbox relay delivers (sinks, a task queue); the engine adds its own. */
  readonly destinations?: readonly Destination[];
  /**
   * Sinks that hear of human tasks opening, being claimed, released, answered and expiring, by namespace
   * (`*`: every namespace): `{"default": ["inbox-hook"]}`. Each sink must be among `destinations`.
   */
  readonly humanTaskSinks?: Readonly<Record<string, readonly string[]>>;
  /** Secret that signs run status callbacks sent to a URL (`x-weft-signature`). */
  readonly webhookSecret?: string;
  /**
   * Hosts, addresses and CIDR ranges that `http` nodes, webhooks and status callbacks may reach although
   * they are loopback, private, link-local or cloud metadata (refused otherwise); `WEFT_OUTBOUND_ALLOW`.
   */
  readonly outboundAllow?: string | readonly string[];
  /** The outbound policy itself, shared with destinations built elsewhere (overrides outboundAllow). */
  readonly outbound?: Outbound;
  /** Where sealed secrets are kept (in memory by default). */
  readonly secretStore?: SecretStore;
  /** Where task log lines are kept (`PgTaskLogStore`); without one, writing or reading them answers 501. */
  readonly taskLogStore?: TaskLogStore;
  /**
   * The keys that seal secrets (`WEFT_SECRETS_KEY`, `WEFT_SECRETS_OLD_KEYS`); without them secrets cannot be
   * set or used. At start, secrets sealed with an old key are sealed again with the current one.
   */
  readonly secretKeys?: SecretKeys;
  /** Consulted before a step is claimed: admit with a release, or defer (org-wide caps plug in here). */
  readonly gate?: Gate;
  /** Receives committed run and task history. */
  readonly observer?: Observer;
  /** Receives run and task spans, derived from committed history. */
  readonly tracer?: Tracer;
  /** Before start, step context, after step, run finished. */
  readonly hooks?: Hooks;
}
