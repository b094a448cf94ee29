/** A span that begins: a run (`spanId` = run id) or a task attempt (`run/node/iteration/attempt`). */
export interface SpanStart {
  readonly spanId: string;
  /** The run's span for a task; null for a run. */
  readonly parentId: string | null;
  readonly kind: 'run' | 'task';
  /** The definition's name for a run, the node's id for a task. */
  readonly name: string;
  readonly runId: string;
  readonly nodeId: string | null;
  readonly iteration: string | null;
  readonly attempt: number | null;
  readonly at: Date;
}

/** A span that ends, with how it ended. */
export interface SpanEnd {
  readonly spanId: string;
  readonly kind: 'run' | 'task';
  readonly runId: string;
  readonly at: Date;
  /** `ok` for a completed run or task; `error` otherwise, with the status (failed, cancelled, …). */
  readonly outcome: 'ok' | 'error';
  readonly status: string;
}

/**
 * Spans for tracing, derived from committed history: a run span from `run.started` to the run's end, and
 * a span per task attempt from `task.scheduled` to `task.completed` or `task.failed`. Span ids are
 * derived from the run and the attempt, so a start and an end reported by different processes pair up in
 * the tracing backend. Called after commit only; errors are logged and ignored.
 */
export interface Tracer {
  startSpan(span: SpanStart): void;
  endSpan(span: SpanEnd): void;
}

/** The span id of a task attempt. */
export function taskSpanId(runId: string, nodeId: string, iteration: string, attempt: number): string {
  return `${runId}/${nodeId}/${iteration}/${attempt}`;
}
