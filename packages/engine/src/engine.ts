import { HTTP_TASK_TYPE } from '@weft/core';
import { decideRound, leaseRound, timerRound } from './background.js';
import type { Cascader } from './cascade.js';
import { type Clock, systemClock } from './clock.js';
import { DEFAULT_CONFIG, type EngineConfig } from './config.js';
import type { EngineContext } from './context.js';
import { ControlService } from './control.js';
import { DefinitionService } from './definitions.js';
import { type Dispatcher, tableDispatcher } from './dispatcher.js';
import { Evaluator } from './evaluator.js';
import { type Logger, silentLogger } from './logger.js';
import { BackgroundLoop } from './loop.js';
import { childRunCascader } from './outbox/child-cascade.js';
import { type Destination, Destinations } from './outbox/destination.js';
import { Relay } from './outbox/relay.js';
import { runEffectsDestination } from './outbox/run-effects.js';
import { webhookDestination } from './outbox/webhook.js';
import { RunIndex } from './run-index.js';
import { RunService } from './runs.js';
import { SignalService } from './signals.js';
import { EngineStats } from './stats.js';
import type { Store } from './store.js';
import { runHttpTask } from './system/http-task.js';
import { SystemTaskRunner } from './system/runner.js';
import { TaskService } from './tasks.js';
import { Wakeups } from './wakeups.js';

/** What an engine is built from. Only the store is required. */
export interface EngineOptions {
  readonly store: Store;
  readonly dispatcher?: Dispatcher;
  /** Stops what runs started beyond their own tasks; by default their child runs (childRunCascader). */
  readonly cascader?: Cascader;
  readonly config?: Partial<EngineConfig>;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Where the outbox relay delivers (sinks, a task queue); the engine adds its own. */
  readonly destinations?: readonly Destination[];
  /** Secret that signs run status callbacks sent to a URL (`x-weft-signature`). */
  readonly webhookSecret?: string;
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
  readonly context: EngineContext;
  private readonly loops: BackgroundLoop[] = [];
  private unlisten: (() => Promise<void>) | null = null;
  private started = false;

  constructor(options: EngineOptions) {
    const config: EngineConfig = { ...DEFAULT_CONFIG, ...options.config };
    const definitions = new DefinitionService(options.store);
    const stats = new EngineStats();
    this.context = {
      store: options.store,
      dispatcher: options.dispatcher ?? tableDispatcher,
      cascader: options.cascader ?? childRunCascader,
      config,
      definitions,
      evaluator: new Evaluator(definitions, stats),
      wakeups: new Wakeups(),
      logger: options.logger ?? silentLogger,
      runs: new RunIndex(),
      stats,
      destinations: new Destinations(),
    };
    const destinations = this.context.destinations;
    destinations.register(runEffectsDestination(this.context));
    destinations.register(webhookDestination(options.webhookSecret ? { secret: options.webhookSecret } : {}));
    for (const d of options.destinations ?? []) destinations.register(d);
    this.definitions = definitions;
    this.control = new ControlService(this.context);
    this.runs = new RunService(this.context, this.control);
    this.tasks = new TaskService(this.context);
    this.signals = new SignalService(this.context);
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
    );
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
  private readonly relay: Relay;

  /** Adds (or replaces) an outbox destination, such as a sink configured after start. */
  addDestination(destination: Destination): void {
    this.context.destinations.register(destination);
  }

  /** Starts the background loops and listens for other processes' wake-ups. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
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
