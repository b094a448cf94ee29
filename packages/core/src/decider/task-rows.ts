import type { Json } from '../json.js';
import type { DecisionContext } from './context.js';
import type { Arrival, TaskError, TaskState } from './state.js';

/** What a node instance's row is set to when it starts (or is skipped). */
export interface TaskFields {
  readonly status: 'queued' | 'running' | 'completed' | 'skipped' | 'failed';
  readonly input: Json | null;
  readonly output?: Json | null;
  readonly error?: TaskError | null;
  readonly arrivals: readonly Arrival[];
  readonly dispatch?: { taskType: string; priority: number; timeoutMs: number | null };
}

/** Creates attempt 1 of a node instance, or moves its waiting join row on. */
export function putTask(
  ctx: DecisionContext,
  nodeId: string,
  iteration: string,
  waiting: TaskState | null,
  f: TaskFields,
): void {
  if (waiting) {
    ctx.emit({
      kind: 'update_task',
      nodeId,
      iteration,
      attempt: waiting.attempt,
      expect: 'waiting',
      status: f.status,
      input: f.input,
      output: f.output ?? null,
      error: f.error ?? null,
      arrivals: f.arrivals,
      dispatch: f.dispatch ?? null,
    });
    return;
  }
  ctx.emit({
    kind: 'create_task',
    nodeId,
    iteration,
    attempt: 1,
    status: f.status,
    input: f.input,
    output: f.output ?? null,
    error: f.error ?? null,
    arrivals: f.arrivals,
    dispatch: f.dispatch ?? null,
  });
}
