import {
  type CheckOptions,
  type CodeWorkflow,
  checkDefinition,
  type Definition,
  type Json,
  ok,
  parseDefinition,
  WeftError,
} from '@weft/core';
import {
  type DefinitionRecord,
  Engine,
  type EngineOptions,
  type Hooks,
  type RunRecord,
  type SignalOutcome,
  type StartRequest,
  type StartVerdict,
} from '@weft/engine';
import { Executor } from './executor.js';
import { type Handler, handlerMap } from './handlers.js';
import type { ManualClock } from './manual-clock.js';
import { RunFailedError } from './run-result.js';
import { RunWaiter } from './run-waiter.js';

/**
 * What an embedded engine is built from: everything an `Engine` takes (the store, and optionally a
 * dispatcher and the other extension points), plus the handlers this process runs.
 */
export interface EmbeddedOptions extends EngineOptions {
  /** Plain async functions by task type (see `handle`). */
  readonly handlers?: readonly Handler[];
  /** The namespace runs start in and handlers take tasks from; `default` when absent. */
  readonly namespace?: string;
  /** Tasks the in-process executor runs at once (16 by default). */
  readonly concurrency?: number;
  /** The worker name in leases and history. */
  readonly worker?: string;
  /**
   * Task types run by workers outside this process (over HTTP): a definition may use them without a
   * handler here. `any` turns the check off.
   */
  readonly externalTaskTypes?: readonly string[] | 'any';
  /** Time for a MemoryStore built on it, moved by `advance` (see createTestEngine). */
  readonly manualClock?: ManualClock;
  /**
   * How often awaited results look in the store for runs whose end was not announced (a notification lost
   * between processes): 5,000 ms by default. Ends are announced as they commit, so this is only a safety net.
   */
  readonly resultLookMs?: number;
}

/** A started run: its id, and its output once it completes. */
export interface RunHandle<O extends Json = Json> {
  readonly id: string;
  /** The run's output; rejects with RunFailedError if it fails, is cancelled or is terminated. */
  result(): Promise<O>;
}

/**
 * Weft inside one process: an engine over the given store, with the handlers run in process by an
 * executor that leases through the engine's task service. Workflows are deployed (code-first or YAML),
 * runs started and their results awaited. Nothing here is kept in memory that matters: on PostgreSQL,
 * a new engine on the same database finishes what a stopped one left.
 */
export class EmbeddedEngine {
  /** The engine itself: services (`runs`, `control`, `signals`, ...) and background loops. */
  readonly engine: Engine;
  readonly namespace: string;
  private readonly handlers: Map<string, Handler>;
  private readonly executor: Executor;
  private readonly waiter: RunWaiter;
  private readonly checked = new Set<string>();
  private readonly deployed = new Map<string, Promise<DefinitionRecord>>();
  private starting: Promise<void> | null = null;

  constructor(private readonly options: EmbeddedOptions) {
    const {
      handlers,
      namespace,
      concurrency,
      worker,
      externalTaskTypes,
      manualClock,
      resultLookMs,
      ...engine
    } = options;
    const hooks = engine.hooks;
    this.namespace = namespace ?? 'default';
    // Every start in this namespace is checked against the handlers, with the version it will run: the
    // latest as the start's transaction confirms it, even when another process deployed it meanwhile
    // (test: "a start checks its handlers against the version another engine deployed").
    const beforeStart = async (
      request: StartRequest,
      definition: DefinitionRecord,
    ): Promise<StartVerdict> => {
      if (request.namespace === this.namespace) this.check(definition.id, definition.definition);
      return hooks?.beforeStart ? hooks.beforeStart(request, definition) : { kind: 'allow' };
    };
    // Each hook taken by name (a hooks object may keep them on its prototype, which a spread would drop).
    const composed: Hooks = { beforeStart };
    if (hooks?.stepContext) composed.stepContext = hooks.stepContext;
    if (hooks?.afterStep) composed.afterStep = hooks.afterStep;
    if (hooks?.onRunFinished) composed.onRunFinished = hooks.onRunFinished;
    this.engine = new Engine({ ...engine, hooks: composed });
    this.waiter = new RunWaiter(this.engine, resultLookMs ?? 5000);
    this.handlers = handlerMap(handlers ?? []);
    this.executor = new Executor(this.engine.tasks, this.handlers, {
      namespace: this.namespace,
      worker: worker ?? `embedded-${process.pid}`,
      concurrency: concurrency ?? 16,
      logger: this.engine.context.logger,
      logs: this.engine.logs,
    });
  }

  /** Starts the background loops and the executor (done on first use too); resolves once they run. */
  ready(): Promise<void> {
    this.starting ??= (async () => {
      await this.engine.start();
      this.executor.start();
    })();
    return this.starting;
  }

  /** Stops taking tasks (those in flight are abandoned: their leases expire) and stops the loops. */
  async stop(): Promise<void> {
    await this.executor.stop();
    await this.engine.stop();
    this.starting = null;
  }

  /**
   * Deploys a workflow: a code-first one, or YAML text. Deploying the same content again gives the same
   * version. Checked first, task types against the handlers included: a bad one throws
   * `invalid_definition` listing every problem.
   */
  async deploy(workflow: CodeWorkflow | string): Promise<{ name: string; version: number }> {
    await this.ready();
    const source = typeof workflow === 'string' ? workflow : workflow.yaml;
    let deploying = this.deployed.get(source);
    if (!deploying) {
      // Checked before anything is stored: a workflow this engine cannot run is not deployed.
      const parsed = typeof workflow === 'string' ? parseDefinition(workflow) : ok(workflow.definition);
      if (parsed.ok) this.verdict(parsed.value);
      deploying = this.engine.definitions.deploy(this.namespace, source).then((d) => d.record);
      this.deployed.set(source, deploying);
      deploying.catch(() => this.deployed.delete(source));
    }
    const record = await deploying;
    this.check(record.id, record.definition);
    return { name: record.name, version: record.version };
  }

  /**
   * Starts a run of a workflow (deployed now if it is a code-first one not deployed yet) and returns its
   * handle. The version it runs is checked first, as at deploy (a version deployed by another process
   * too); the latest version is taken as the engine last read it, and confirmed by the start's transaction.
   */
  async start<I extends Json, O extends Json>(
    workflow: CodeWorkflow<I, O> | string,
    input: I,
    options: { readonly idempotencyKey?: string; readonly version?: number } = {},
  ): Promise<RunHandle<O>> {
    await this.ready();
    const name = typeof workflow === 'string' ? workflow : workflow.name;
    if (typeof workflow !== 'string') await this.deploy(workflow);
    const run = await this.engine.runs.start({
      namespace: this.namespace,
      definition: name,
      input,
      ...(options.version !== undefined ? { version: options.version } : {}),
      ...(options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
    });
    // The handle waits from the run as its start committed it: no read until the run ends.
    return { id: run.id, result: () => this.outcome<O>(run.id, run) };
  }

  /** Starts a run and waits for its output (rejects with RunFailedError when it does not complete). */
  async run<I extends Json, O extends Json>(workflow: CodeWorkflow<I, O> | string, input: I): Promise<O> {
    return (await this.start(workflow, input)).result();
  }

  /** Waits for a run to end: its output, or RunFailedError. */
  result<O extends Json = Json>(runId: string): Promise<O> {
    return this.outcome<O>(runId);
  }

  private async outcome<O extends Json>(runId: string, seen?: RunRecord): Promise<O> {
    await this.ready();
    const run = await this.waiter.wait(runId, seen);
    if (run.status !== 'completed') throw new RunFailedError(run);
    return run.output as O;
  }

  /**
   * Waits for a run to end, however it ends. Starts the engine first (as any first use does): it then listens
   * for the ends of runs other processes finish.
   */
  async settled(runId: string): Promise<RunRecord> {
    await this.ready();
    return this.waiter.wait(runId);
  }

  /** Sends a signal to a run (what a `waitForEvent` node waits for). */
  signal(runId: string, name: string, data: Json = null, correlation?: string): Promise<SignalOutcome> {
    return this.engine.signals.send({
      namespace: this.namespace,
      runId,
      name,
      data,
      correlation: correlation ?? null,
      by: 'embedded',
    });
  }

  /**
   * Moves the manual clock forward and wakes the loops that look at time (timers, deferred decisions), so
   * waits, retry backoffs and timeouts fall due at once. Only for an engine built with a manual clock.
   */
  advance(by: number | string): Date {
    const clock = this.options.manualClock;
    if (!clock)
      throw new WeftError(
        'no_manual_clock',
        'advance needs an engine whose store runs on a manual clock: build it with createTestEngine',
      );
    const now = clock.advance(by);
    this.engine.context.wakeups.announce([{ kind: 'timers' }, { kind: 'decisions' }]);
    return now;
  }

  /** Runs the same check as deploy (cached per version): the definition, and task types against handlers. */
  private check(definitionId: string, definition: Definition): void {
    if (this.checked.has(definitionId)) return;
    this.verdict(definition);
    this.checked.add(definitionId);
  }

  /** Throws `invalid_definition` listing every problem, unhandled task types included. */
  private verdict(definition: Definition): void {
    const external = this.options.externalTaskTypes ?? [];
    const options: CheckOptions =
      external === 'any' ? {} : { taskTypes: new Set([...this.handlers.keys(), ...external]) };
    const result = checkDefinition(definition, options);
    if (!result.ok)
      throw new WeftError('invalid_definition', result.error.message, 422, {
        problems: result.error.problems,
      });
  }
}

/** Creates an embedded engine (started on first use, or with `ready()`). */
export function createEngine(options: EmbeddedOptions): EmbeddedEngine {
  return new EmbeddedEngine(options);
}
