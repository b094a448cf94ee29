import type { LeasedTask } from '@weft/client/tasks';
import type { TaskContext } from './task-context.js';
import type { TaskLog } from './task-log.js';

/**
 * One task a worker runs: the context its handler gets, and what the worker does to it (abort it, close
 * its log). The abort signal and the log are made when the handler first reads them, or the signal when
 * the worker aborts: most handlers read neither, and a worker runs thousands of tasks a second.
 */
export class Attempt {
  readonly context: TaskContext;
  private controller: AbortController | null = null;
  private aborted = false;
  private reason: unknown;
  private log: TaskLog | null = null;
  private settled = false;

  constructor(
    readonly task: LeasedTask,
    private readonly openLog: () => TaskLog,
  ) {
    const attempt = this;
    this.context = {
      taskId: task.task_id,
      runId: task.run_id,
      nodeId: task.node_id,
      iteration: task.iteration,
      attempt: task.attempt,
      idempotencyKey: task.idempotency_key,
      taskType: task.task_type,
      definition: task.definition,
      get signal() {
        return attempt.signal();
      },
      get log() {
        return attempt.logger().logger;
      },
      ...(task.context !== undefined ? { context: task.context } : {}),
      ...(task.traceparent !== undefined ? { traceparent: task.traceparent } : {}),
    };
  }

  /** Signals the handler to stop (a lost lease, a hard stop); a signal read later is already aborted. */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }

  /**
   * The handler finished: its log takes no more lines. Null when nothing is left to send (the report goes
   * at once); otherwise a promise that settles once the last lines are sent or dropped.
   */
  settle(): Promise<void> | null {
    this.settled = true;
    return this.log?.close() ?? null;
  }

  private signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  private logger(): TaskLog {
    if (!this.log) {
      this.log = this.openLog();
      // Lines written after the report would outlive the lease: a log opened that late takes none.
      if (this.settled) void this.log.close();
    }
    return this.log;
  }
}
