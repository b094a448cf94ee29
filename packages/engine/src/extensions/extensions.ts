import { WeftError } from '@weft/core';
import type { DefinitionRecord, LeasedTask, StartRequest } from '../store/records.js';
import type { Logger } from '../support/logger.js';
import { traceLeases } from '../tracing/lease-spans.js';
import type { Gate } from './gate.js';
import { GateSlots } from './gate-slots.js';
import type { FinishedRun, Hooks, StepOutcome } from './hooks.js';
import type { ObservedEvent, Observer } from './observer.js';
import { type SpanEnd, type SpanStart, type Tracer, taskSpanId } from './tracer.js';

/** The extension points an engine is given (see EngineOptions). */
export interface ExtensionOptions {
  readonly gate?: Gate;
  readonly observer?: Observer;
  readonly tracer?: Tracer;
  readonly hooks?: Hooks;
}

/** What one committed transaction reports: its history events and the runs it finished. */
export interface CommittedWork {
  readonly events: readonly ObservedEvent[];
  readonly finished: readonly FinishedRun[];
}

/**
 * Calls the engine's extensions at the right moments and keeps their failures from reaching the engine:
 * an observer, tracer or after-commit hook that throws is logged, never retried, and never rolls anything
 * back (it runs after commit).
 */
export class Extensions {
  readonly gate: Gate | null;
  /** Gate slots held by attempts leased in this process. */
  readonly slots: GateSlots;
  private readonly observer: Observer | null;
  private readonly tracer: Tracer | null;
  private readonly hooks: Hooks;

  constructor(
    options: ExtensionOptions,
    private readonly logger: Logger,
  ) {
    this.gate = options.gate ?? null;
    this.slots = new GateSlots(logger);
    this.observer = options.observer ?? null;
    this.tracer = options.tracer ?? null;
    this.hooks = options.hooks ?? {};
  }

  /** True when anything listens for committed work (so passes need not collect it otherwise). */
  get listening(): boolean {
    return this.observer !== null || this.tracer !== null || this.hooks.onRunFinished !== undefined;
  }

  /**
   * Before a start writes anything, with the version it will run: a refusal by `beforeStart` becomes a
   * `start_refused` error (HTTP 403) with the hook's code in its details.
   */
  async checkStart(request: StartRequest, definition: DefinitionRecord): Promise<void> {
    const hook = this.hooks.beforeStart;
    if (!hook) return;
    const verdict = await hook(request, definition);
    if (verdict.kind === 'refuse')
      throw new WeftError(
        'start_refused',
        `the start of "${request.definition}" was refused by a before-start hook (${verdict.code}): ${verdict.message}`,
        403,
        { reason: verdict.code },
      );
  }

  /**
   * Leased tasks with the context a `stepContext` hook builds for each, and the `traceparent` of their
   * lease's span (see traceLeases).
   */
  async withContext(leased: LeasedTask[]): Promise<LeasedTask[]> {
    const tasks = leased.length === 0 ? leased : traceLeases(leased);
    const hook = this.hooks.stepContext;
    if (!hook || tasks.length === 0) return tasks;
    return Promise.all(
      tasks.map(async (t) => {
        const context = await hook(t);
        return context === undefined ? t : { ...t, context };
      }),
    );
  }

  /** After a report's transaction committed: `afterStep` for each applied report. */
  async stepsDone(steps: readonly StepOutcome[]): Promise<void> {
    const hook = this.hooks.afterStep;
    if (!hook) return;
    for (const step of steps) await this.safely('afterStep', () => hook(step));
  }

  /** After a transaction committed: the observer, the tracer and `onRunFinished`, in that order. */
  async committed(work: CommittedWork): Promise<void> {
    if (work.events.length === 0 && work.finished.length === 0) return;
    const observer = this.observer;
    if (observer && work.events.length > 0)
      await this.safely('observer', () => observer.onEvents(work.events));
    const tracer = this.tracer;
    if (tracer) {
      await this.safely('tracer', () => {
        for (const e of work.events) {
          const start = spanStart(e);
          if (start) tracer.startSpan(start);
          const end = taskSpanEnd(e);
          if (end) tracer.endSpan(end);
        }
        for (const run of work.finished) {
          const at = work.events.findLast((e) => e.runId === run.runId)?.at ?? new Date();
          tracer.endSpan({
            spanId: run.runId,
            kind: 'run',
            runId: run.runId,
            at,
            outcome: run.status === 'completed' ? 'ok' : 'error',
            status: run.status,
          });
        }
      });
    }
    const hook = this.hooks.onRunFinished;
    if (hook) for (const run of work.finished) await this.safely('onRunFinished', () => hook(run));
  }

  private async safely(what: string, fn: () => unknown): Promise<void> {
    try {
      await fn();
    } catch (e) {
      this.logger.warn(
        { extension: what, error: e instanceof Error ? e.message : String(e) },
        'an extension failed',
      );
    }
  }
}

function spanStart(e: ObservedEvent): SpanStart | null {
  if (e.type === 'run.started')
    return {
      spanId: e.runId,
      parentId: null,
      kind: 'run',
      name: e.definition,
      runId: e.runId,
      nodeId: null,
      iteration: null,
      attempt: null,
      at: e.at,
    };
  if (e.type === 'task.scheduled' && e.nodeId !== null && e.attempt !== null)
    return {
      spanId: taskSpanId(e.runId, e.nodeId, e.iteration ?? '', e.attempt),
      parentId: e.runId,
      kind: 'task',
      name: e.nodeId,
      runId: e.runId,
      nodeId: e.nodeId,
      iteration: e.iteration ?? '',
      attempt: e.attempt,
      at: e.at,
    };
  return null;
}

function taskSpanEnd(e: ObservedEvent): SpanEnd | null {
  if ((e.type !== 'task.completed' && e.type !== 'task.failed') || e.nodeId === null || e.attempt === null)
    return null;
  return {
    spanId: taskSpanId(e.runId, e.nodeId, e.iteration ?? '', e.attempt),
    kind: 'task',
    runId: e.runId,
    at: e.at,
    outcome: e.type === 'task.completed' ? 'ok' : 'error',
    status: e.type === 'task.completed' ? 'completed' : 'failed',
  };
}
