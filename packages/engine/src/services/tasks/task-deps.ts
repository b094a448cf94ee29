import type { Evaluator } from '../../decisions/evaluator.js';
import type { PassRunner } from '../../decisions/pass-runner.js';
import type { DispatchMode } from '../../dispatch/dispatch-mode.js';
import type { Dispatcher, NamedTask } from '../../dispatch/dispatcher.js';
import type { Extensions } from '../../extensions/extensions.js';
import type { PayloadStore } from '../../payloads/payload-store.js';
import type { Store } from '../../store/store.js';
import type { EngineConfig } from '../../support/config.js';
import type { Logger } from '../../support/logger.js';
import type { EngineStats } from '../../support/stats.js';
import type { Wakeups } from '../../wakeups/wakeups.js';
import type { LimitBook } from '../limits.js';
import type { RunIndex } from '../run-index.js';

/** What the task service uses: it is where workers lease, renew and report, so it touches most parts. */
export interface TaskDeps {
  readonly store: Store;
  readonly passes: PassRunner;
  readonly evaluator: Evaluator;
  /** The gate, gate slots, the step hooks. */
  readonly extensions: Extensions;
  /** Waiting polls, and whom to wake. */
  readonly wakeups: Wakeups;
  readonly payloads: PayloadStore;
  /** Which namespaces have limits (whose polls a finished task may free). */
  readonly limits: LimitBook;
  /** Runs' definitions, to read ahead for a report. */
  readonly runs: RunIndex;
  readonly dispatcher: Dispatcher;
  readonly dispatchMode: DispatchMode;
  readonly stats: EngineStats;
  readonly logger: Logger;
  readonly config: Pick<EngineConfig, 'leaseMs' | 'heartbeatMs' | 'maxPollWaitMs'>;
}

/** The repair of dispatch, as a lease by id uses it (see Redispatcher). */
export interface FinishedTaskRedrive {
  /** Messages named these attempts and leased nothing: re-drives the runs of those that have finished. */
  redriveFinished(named: readonly NamedTask[]): Promise<void>;
}
