import { HTTP_TASK_TYPE } from '@weft/core';
import { BackgroundLoop } from './background/background-loop.js';
import { decideRound, leaseRound, timerRound } from './background/decider.js';
import { Redispatcher } from './background/redispatch.js';
import { Sweeper } from './background/sweeper.js';
import type { EngineContext } from './context.js';
import type { Cascader } from './decisions/cascade.js';
import { Evaluator } from './decisions/evaluator.js';
import { negotiateDispatch } from './dispatch/dispatch-mode.js';
import { type Dispatcher, tableDispatcher } from './dispatch/dispatcher.js';
import { Extensions } from './extensions/extensions.js';
import type { Gate } from './extensions/gate.js';
import type { Hooks } from './extensions/hooks.js';
import type { Observer } from './extensions/observer.js';
import type { Tracer } from './extensions/tracer.js';
import { childRunCascader } from './outbox/child-cascade.js';
import { type Destination, Destinations } from './outbox/destination.js';
import { Relay } from './outbox/relay.js';
import { runEffectsDestination } from './outbox/run-effects.js';
import { webhookDestination } from './outbox/webhook.js';
import type { BlobStore } from './payloads/blob-store.js';
import { FolderBlobStore } from './payloads/folder-blob-store.js';
import { PayloadStore } from './payloads/payload-store.js';
import { DefinitionService } from './services/definitions.js';
import { HumanTaskService } from './services/human-tasks.js';
import { LimitService } from './services/limit-service.js';
import { LimitBook, queueGates } from './services/limits.js';
import { ControlService } from './services/operator-actions.js';
import { RunIndex } from './services/run-index.js';
import { RunService } from './services/runs.js';
import { ScheduleService } from './services/schedules.js';
import { SignalService } from './services/signals.js';
import { TaskService } from './services/tasks/tasks.js';
import type { Store } from './store/store.js';
import { type Clock, systemClock } from './support/clock.js';
import { DEFAULT_CONFIG, type EngineConfig } from './support/config.js';
import { type Logger, silentLogger } from './support/logger.js';
import { EngineStats } from './support/stats.js';
import { Wakeups } from './wakeups/wakeups.js';
import { runHttpTask } from './workers/http-task.js';
import { SystemTaskRunner } from './workers/system-runner.js';

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
  /** Secret that signs run status callbacks sent to a URL (`x-weft-signature`). */
  readonly webhookSecret?: string;
  /** Consulted before a step is claimed: admit with a release, or defer (org-wide caps plug in here). */
  readonly gate?: Gate;
  /** Receives committed run and task history. */
  readonly observer?: Observer;
  /** Receives run and task spans, derived from committed history. */
  readonly tracer?: Tracer;
  /** Before start, step context, after step, run finished. */
  readonly hooks?: Hooks;
}

/**
 * The engine: definitions, runs and tasks as services over a store, plus the background loops that fire
 * timers, expire leases and take deferred decisions. Holds no state of its own that matters: any number
 * of engines may share one store.
 */
export class Engine {
  readonly definitions: DefinitionService;
  readonly runs: RunService;
  /** Operator actions: pause, resume, cancel, terminate, retry, rerun, finishing tasks by hand. */
  readonly control: ControlService;
  readonly tasks: TaskService;
  readonly signals: SignalService;
  readonly limits: LimitService;
  readonly inbox: HumanTaskService;
  readonly schedules: ScheduleService;
  readonly sweeper: Sweeper;
  readonly context: EngineContext;
  private readonly loops: BackgroundLoop[] = [];
  private unlisten: (() => Promise<void>) | null = null;
  private started = false;

  constructor(options: EngineOptions) {
    const config: EngineConfig = { ...DEFAULT_CONFIG, ...options.config };
    const definitions = new DefinitionService(options.store);
    const stats = new EngineStats();
    const payloads = new PayloadStore(options.blobs ?? new FolderBlobStore('.weft/blobs'), {
      thresholdBytes: config.payloadThresholdBytes,
      maxBytes: config.maxPayloadBytes,
    });
    const limitBook = new LimitBook(options.store);
    const dispatcher = options.dispatcher ?? tableDispatcher;
    const logger = options.logger ?? silentLogger;
    this.context = {
      store: options.store,
      dispatcher,
      dispatchMode: negotiateDispatch(options.store, dispatcher),
      extensions: new Extensions(options, logger),
      cascader: options.cascader ?? childRunCascader,
      config,
      definitions,
      evaluator: new Evaluator(definitions, stats, payloads),
      wakeups: new Wakeups(),
      logger,
      runs: new RunIndex(),
      stats,
      limits: limitBook,
      gating: {
        gatesOf: (run, nodeId) => {
          const node = definitions.cached(run.definitionId)?.node(nodeId);
          return node?.kind === 'task' || node?.kind === 'http' ? queueGates(node) : null;
        },
        isCapped: (namespace, taskType) => limitBook.isCapped(namespace, taskType),
      },
      payloads,
      destinations: new Destinations(),
    };
    // With a queue of one's own, a retry's backoff is the dispatcher's delay (seed 003).
    this.context.evaluator.decideOptions = { retryOnQueue: this.context.dispatchMode.kind !== 'rows' };
    const destinations = this.context.destinations;
    destinations.register(runEffectsDestination(this.context));
    destinations.register(webhookDestination(options.webhookSecret ? { secret: options.webhookSecret } : {}));
    for (const d of options.destinations ?? []) destinations.register(d);
    this.definitions = definitions;
    this.control = new ControlService(this.context);
    this.runs = new RunService(this.context, this.control);
    this.tasks = new TaskService(this.context);
    this.signals = new SignalService(this.context);
    this.limits = new LimitService(this.context);
    this.inbox = new HumanTaskService(this.context);
    this.schedules = new ScheduleService(this.context, this.runs);
    this.sweeper = new Sweeper(this.context);
    definitions.onLimitsChanged = (namespace) => this.limits.changed(namespace);
    const clock = options.clock ?? systemClock;
    const onError = (name: string, error: unknown) =>
      this.context.logger.error(
        { loop: name, error: error instanceof Error ? error.message : String(error) },
        'background loop round failed',
      );
    const ctx = this.context;
    this.loops.push(
      new BackgroundLoop('decide', () => decideRound(ctx), config.decidePollMs, clock, onError),
      new BackgroundLoop('timers', () => timerRound(ctx), config.timerPollMs, clock, onError),
      new BackgroundLoop('leases', () => leaseRound(ctx), config.leasePollMs, clock, onError),
      new BackgroundLoop('schedules', () => this.schedules.round(), config.schedulePollMs, clock, onError),
      new BackgroundLoop(
        'sweeper',
        async () => {
          await this.sweeper.round();
          return false;
        },
        config.sweepPollMs,
        clock,
        onError,
      ),
    );
    this.redispatcher = Redispatcher.of(this.context);
    this.loops.push(
      new BackgroundLoop(
        'redispatch',
        () => this.redispatcher.round(),
        config.redispatchPollMs,
        clock,
        onError,
      ),
    );
    this.context.wakeups.on('limits', () => {
      limitBook
        .refresh()
        .catch((e) => this.context.logger.warn({ error: String(e) }, 'could not reload limits'));
    });
    this.context.wakeups.on('decisions', () => this.loops[0]!.wake());
    this.context.wakeups.on('timers', () => this.loops[1]!.wake());
    const relayLoop = new BackgroundLoop(
      'outbox',
      () => this.relay.round(),
      config.relayPollMs,
      clock,
      onError,
    );
    this.relay = new Relay(ctx, () => relayLoop.wake());
    this.loops.push(relayLoop);
    this.context.wakeups.on('outbox', () => relayLoop.wake());
    this.runner = new SystemTaskRunner(this.tasks, {
      handlers: { [HTTP_TASK_TYPE]: runHttpTask },
      concurrency: config.systemConcurrency,
      logger: this.context.logger,
    });
  }

  private readonly runner: SystemTaskRunner;
  /** Sends queued tasks left without a message again (write-then-enqueue dispatchers only). */
  readonly redispatcher: Redispatcher;
  private readonly relay: Relay;

  /** Adds (or replaces) an outbox destination, such as a sink configured after start. */
  addDestination(destination: Destination): void {
    this.context.destinations.register(destination);
  }

  /** Starts the background loops and listens for other processes' wake-ups. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.context.limits.refresh();
    if (this.context.config.crossProcessWakeups) {
      this.unlisten = await this.context.store.listen((w) => this.context.wakeups.publish(w));
      const store = this.context.store;
      const logger = this.context.logger;
      this.context.wakeups.connect((wakeups) => {
        store
          .notify(wakeups)
          .catch((e) => logger.warn({ error: String(e) }, 'could not publish a wake-up to other servers'));
      });
    }
    if (this.context.config.backgroundLoops) for (const loop of this.loops) loop.start();
    if (this.context.config.systemTasks) this.runner.start();
  }

  /** Stops the loops; the store stays open (its owner closes it). */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await Promise.all([...this.loops.map((l) => l.stop()), this.runner.stop()]);
    await this.relay.stop();
    this.context.wakeups.disconnect();
    await this.unlisten?.();
    this.unlisten = null;
  }
}
