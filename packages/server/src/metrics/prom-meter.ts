import type { EngineMeter } from '@weft/engine/internal';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { LabelFolds } from './label-fold.js';

/** Buckets, in seconds, for what takes milliseconds: a step, a queue wait, a decision, a request. */
export const FAST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Buckets, in seconds, for a task's work. */
export const TASK_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];
/** Buckets, in seconds, for a run, which may last days. */
export const RUN_BUCKETS = [0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 14_400, 86_400, 604_800];

/**
 * The engine's meter as Prometheus metrics: runs started and finished by namespace, definition and
 * status; run, task, queue-wait, step and decision durations; decisions that changed nothing. Labels go
 * through the folds, so their cardinality stays bounded.
 */
export class PromMeter implements EngineMeter {
  private readonly started: Counter<'namespace' | 'definition'>;
  private readonly finished: Counter<'namespace' | 'definition' | 'status'>;
  private readonly runSeconds: Histogram<'namespace' | 'definition' | 'status'>;
  private readonly taskSeconds: Histogram<'task_type' | 'status'>;
  private readonly queueWait: Histogram<'task_type'>;
  private readonly step: Histogram<'task_type'>;
  private readonly decision: Histogram<never>;
  private readonly unchanged: Counter<never>;

  constructor(
    registry: Registry,
    private readonly folds: LabelFolds,
  ) {
    const registers = [registry];
    this.started = new Counter({
      name: 'weft_runs_started_total',
      help: 'Runs started (by the API, a schedule or a parent run), by namespace and definition.',
      labelNames: ['namespace', 'definition'],
      registers,
    });
    this.finished = new Counter({
      name: 'weft_runs_finished_total',
      help: 'Runs finished, by namespace, definition and status (completed, failed, cancelled, terminated).',
      labelNames: ['namespace', 'definition', 'status'],
      registers,
    });
    this.runSeconds = new Histogram({
      name: 'weft_run_duration_seconds',
      help: 'Time from a run’s start to its end, by namespace, definition and status.',
      labelNames: ['namespace', 'definition', 'status'],
      buckets: RUN_BUCKETS,
      registers,
    });
    this.taskSeconds = new Histogram({
      name: 'weft_task_duration_seconds',
      help: 'Time from a task’s lease to its accepted report, by task type and status (completed, failed).',
      labelNames: ['task_type', 'status'],
      buckets: TASK_BUCKETS,
      registers,
    });
    this.queueWait = new Histogram({
      name: 'weft_task_queue_wait_seconds',
      help: 'Time a task waited on the queue, from when it was due to its lease, by task type.',
      labelNames: ['task_type'],
      buckets: FAST_BUCKETS,
      registers,
    });
    this.step = new Histogram({
      name: 'weft_step_latency_seconds',
      help: 'Time from the end of a task to the lease of the first attempt of a task it led to, by task type.',
      labelNames: ['task_type'],
      buckets: FAST_BUCKETS,
      registers,
    });
    this.decision = new Histogram({
      name: 'weft_decision_transaction_seconds',
      help: 'Duration of the transactions that decide runs, from begin to commit (retries included).',
      buckets: FAST_BUCKETS,
      registers,
    });
    this.unchanged = new Counter({
      name: 'weft_decisions_unchanged_total',
      help: 'Decision transactions that changed nothing; a sustained rate says wake-ups are duplicated.',
      registers,
    });
  }

  runStarted(namespace: string, definition: string): void {
    this.started.inc(this.runLabels(namespace, definition));
  }

  runFinished(namespace: string, definition: string, status: string, seconds: number): void {
    const labels = { ...this.runLabels(namespace, definition), status };
    this.finished.inc(labels);
    this.runSeconds.observe(labels, seconds);
  }

  taskFinished(taskType: string, status: string, seconds: number): void {
    this.taskSeconds.observe({ task_type: this.folds.taskType.value(taskType), status }, seconds);
  }

  taskLeased(taskType: string, queueWaitSeconds: number, stepSeconds: number | null): void {
    const labels = { task_type: this.folds.taskType.value(taskType) };
    this.queueWait.observe(labels, queueWaitSeconds);
    if (stepSeconds !== null) this.step.observe(labels, stepSeconds);
  }

  decisionPass(seconds: number, changed: boolean): void {
    this.decision.observe(seconds);
    if (!changed) this.unchanged.inc();
  }

  private runLabels(namespace: string, definition: string) {
    return {
      namespace: this.folds.namespace.value(namespace),
      definition: this.folds.definition.value(definition),
    };
  }
}
