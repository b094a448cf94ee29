import type { Run } from './types.js';

/** A run waited for ended without completing: `run` is the run as it ended. */
export class RunNotCompletedError extends Error {
  override readonly name: string = 'RunNotCompletedError';
  constructor(
    readonly run: Run,
    message: string,
  ) {
    super(message);
  }

  get runId(): string {
    return this.run.id;
  }
}

/** The run waited for failed; `runError` is the run's error (its message, node and reason). */
export class RunFailedError extends RunNotCompletedError {
  override readonly name: string = 'RunFailedError';
  constructor(run: Run) {
    const where = run.error?.node ? ` at node ${run.error.node}` : '';
    super(run, `run ${run.id} failed${where}: ${run.error?.message ?? 'no error recorded'}`);
  }

  get runError(): NonNullable<Run['error']> | null {
    return this.run.error;
  }
}

/** The run waited for was cancelled or terminated (`run.status` says which). */
export class RunCancelledError extends RunNotCompletedError {
  override readonly name: string = 'RunCancelledError';
  constructor(run: Run) {
    const why = run.error?.message ? `: ${run.error.message}` : '';
    super(run, `run ${run.id} was ${run.status}${why}`);
  }
}

/** The wait ran out before the run finished; the run goes on. `status` is the last one seen. */
export class RunWaitTimeoutError extends Error {
  override readonly name: string = 'RunWaitTimeoutError';
  constructor(
    readonly runId: string,
    readonly status: Run['status'],
    readonly timeoutMs: number,
  ) {
    super(
      `run ${runId} is still ${status} after ${timeoutMs} ms of waiting; it goes on: wait again with result(runId) or raise timeoutMs`,
    );
  }
}
