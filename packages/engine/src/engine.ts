import { HTTP_TASK_TYPE } from '@weft/core';
import type { BackgroundLoopStatus } from './background/background-loop.js';
import { BackgroundLoops } from './background/background-loops.js';
import { Redispatcher } from './background/redispatch.js';
import { Sweeper } from './background/sweeper.js';
import { createContext, type EngineContext } from './context.js';
import type { EngineOptions } from './engine-options.js';
import { createOutbound } from './outbound/outbound.js';
import type { Destination } from './outbox/destination.js';
import { runEffectsDestination } from './outbox/run-effects.js';
import { webhookDestination } from './outbox/webhook.js';
import { checkSecretsNamed, secretsNamedBy } from './secrets/placeholders.js';
import { SecretBox } from './secrets/secret-box.js';
import { SecretService } from './secrets/secret-service.js';
import { MemorySecretStore } from './secrets/secret-store.js';
import { BlobDeleter } from './services/blob-deleter.js';
import type { DefinitionService } from './services/definitions.js';
import { EventService } from './services/events.js';
import { ForkService } from './services/forks.js';
import { HumanTaskService } from './services/human-tasks.js';
import { LimitService } from './services/limit-service.js';
import { OperatorActionService } from './services/operator-actions.js';
import { RetentionService } from './services/retention.js';
import { RunMoveService } from './services/run-moves.js';
import { RunService } from './services/runs.js';
import { ScheduleService } from './services/schedules.js';
import { SignalService } from './services/signals.js';
import { TaskService } from './services/tasks/tasks.js';
import { systemClock } from './support/clock.js';
import { DEFAULT_CONFIG, type EngineConfig } from './support/config.js';
import { TaskLogService, UnavailableTaskLogStore } from './task-logs/task-log-service.js';
import { httpTaskHandler } from './workers/http-task.js';
import { SystemTaskRunner } from './workers/system-runner.js';

/**
 * The engine: definitions, runs and tasks as services over a store, plus the background loops that fire
 * timers, expire leases and take deferred decisions. Holds no state of its own that matters: any number
 * of engines may share one store.
 */
export class Engine {
  readonly definitions: DefinitionService;
  readonly runs: RunService;
  /** Operator actions: pause, resume, cancel, terminate, retry, rerun, finishing tasks by hand. */
  readonly control: OperatorActionService;
  /** Moving runs in flight to another version of their definition. */
  readonly moves: RunMoveService;
  /** Forking runs: a new run from an existing one, reusing outputs up to a node. */
  readonly forks: ForkService;
  readonly tasks: TaskService;
  readonly signals: SignalService;
  readonly limits: LimitService;
  readonly inbox: HumanTaskService;
  /** Events that start runs of the definitions whose triggers listen for them. */
  readonly events: EventService;
  readonly schedules: ScheduleService;
  /** Secrets per namespace, sealed at rest; resolved only by the calls that use them. */
  readonly secrets: SecretService;
  /** Lines handlers write to their attempts, kept with the run. */
  readonly logs: TaskLogService;
  readonly sweeper: Sweeper;
  /** Retention: policies, purges of finished runs, and archived runs. */
  readonly retention: RetentionService;
  /** Deletes blobs of purged runs that no run references any more (invariant 30). */
  readonly blobDeleter: BlobDeleter;
  /** Sends queued tasks left without a message again (write-then-enqueue dispatchers only). */
  readonly redispatcher: Redispatcher;
  /** The engine's parts, for Weft's own packages (the server, the embedded engine). */
  readonly context: EngineContext;
  private readonly background: BackgroundLoops;
  private readonly runner: SystemTaskRunner;
  private unlisten: (() => Promise<void>) | null = null;
  private started = false;

  constructor(options: EngineOptions) {
    const config: EngineConfig = { ...DEFAULT_CONFIG, ...options.config };
    const ctx = createContext(options, config);
    this.context = ctx;
    ctx.destinations.register(runEffectsDestination(ctx));
    const outbound = options.outbound ?? createOutbound(options.outboundAllow);
    this.secrets = new SecretService(
      options.secretStore ?? new MemorySecretStore(),
      options.secretKeys ? new SecretBox(options.secretKeys) : undefined,
    );
    this.logs = new TaskLogService(options.taskLogStore ?? new UnavailableTaskLogStore());
    const resolve = (namespace: string, names: readonly string[]) => this.secrets.resolve(namespace, names);
    ctx.destinations.register(
      webhookDestination({
        outbound,
        secrets: resolve,
        ...(options.webhookSecret ? { secret: options.webhookSecret } : {}),
      }),
    );
    for (const d of options.destinations ?? []) ctx.destinations.register(d);
    this.definitions = ctx.definitions;
    this.control = new OperatorActionService(ctx);
    this.runs = new RunService(ctx, this.control);
    this.moves = new RunMoveService(ctx);
    this.forks = new ForkService(ctx);
    this.redispatcher = new Redispatcher(ctx);
    this.tasks = new TaskService(ctx, this.redispatcher);
    this.signals = new SignalService(ctx);
    this.limits = new LimitService(ctx);
    this.inbox = new HumanTaskService(ctx);
    this.events = new EventService(ctx);
    this.schedules = new ScheduleService(ctx, this.runs);
    this.sweeper = new Sweeper(ctx);
    this.retention = new RetentionService(ctx);
    this.blobDeleter = new BlobDeleter(ctx);
    ctx.definitions.onLimitsChanged = (namespace) => this.limits.changed(namespace);
    ctx.wakeups.on('limits', () => {
      ctx.limits.refresh().catch((e) => ctx.logger.warn({ error: String(e) }, 'could not reload limits'));
    });
    this.background = new BackgroundLoops(ctx, this, options.clock ?? systemClock);
    this.runner = new SystemTaskRunner(this.tasks, {
      handlers: {
        [HTTP_TASK_TYPE]: httpTaskHandler(outbound, async (runId, names) => {
          if (names.length === 0) return new Map();
          const run = await ctx.store.getRun(runId);
          const workflow = run ? await ctx.definitions.workflow(run.definitionId) : null;
          checkSecretsNamed(names, secretsNamedBy(workflow?.definition));
          return this.secrets.resolve(run?.namespace ?? '', names);
        }),
      },
      concurrency: config.systemConcurrency,
      logger: ctx.logger,
    });
  }

  /**
   * The background loops' status, for readiness checks: empty when the engine runs none (not started, or
   * `backgroundLoops` off).
   */
  backgroundStatus(): BackgroundLoopStatus[] {
    return this.started && this.context.config.backgroundLoops ? this.background.status() : [];
  }

  /** Adds (or replaces) an outbox destination, such as a sink configured after start. */
  addDestination(destination: Destination): void {
    this.context.destinations.register(destination);
  }

  /** Starts the background loops and listens for other processes' wake-ups. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.context.limits.refresh();
    if (this.secrets.enabled) await this.resealSecrets();
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
    if (this.context.config.backgroundLoops) this.background.start();
    if (this.context.config.systemTasks) this.runner.start();
  }

  /** Seals secrets sealed with an old key again with the current one; a failure is logged, not fatal. */
  private async resealSecrets(): Promise<void> {
    const logger = this.context.logger;
    try {
      const { resealed, unopened } = await this.secrets.rotate();
      if (resealed > 0) logger.info({ secrets: resealed }, 'sealed secrets again with the current key');
      if (unopened.length > 0)
        logger.warn(
          { secrets: unopened },
          'secrets sealed with a key this server does not have: add it to WEFT_SECRETS_OLD_KEYS',
        );
    } catch (e) {
      logger.warn({ error: (e as Error).message }, 'could not seal every secret with the current key');
    }
  }

  /** Stops the loops; the store stays open (its owner closes it). */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await Promise.all([this.background.stop(), this.runner.stop()]);
    await this.background.stopRelay();
    this.context.wakeups.disconnect();
    // Stopping the wake-ups' listener needs its connection: when the database is already gone (it was
    // stopped first, or by the same Ctrl-C), there is nothing left to stop, and the stop goes on.
    await this.unlisten?.().catch((e: unknown) =>
      this.context.logger.warn({ error: String(e) }, 'the wake-up listener was already closed'),
    );
    this.unlisten = null;
  }
}
