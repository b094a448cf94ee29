import { isTerminalRun, type Json, type RunError, WeftError } from '@weft/core';
import type { Engine, RunRecord } from '@weft/engine';

/** A run that ended without completing: failed (compensated or not), cancelled or terminated. */
export class RunFailedError extends WeftError {
  constructor(readonly run: RunRecord) {
    const why = run.error?.message ?? 'no reason was recorded';
    super(
      `run_${run.status}`,
      `run ${run.id} of ${run.definitionName} v${run.definitionVersion} ended ${run.status}: ${why}`,
      409,
      { runId: run.id, status: run.status, error: run.error as unknown as Json },
    );
  }

  /** The run's error, as the engine recorded it (with `compensation` when compensations ran). */
  get error(): RunError | null {
    return this.run.error;
  }
}

/**
 * Waits for a run to end and returns it. Woken by commits in this process (the history feed), and looks
 * again every `pollMs` for runs moved on by other processes sharing the store.
 */
export async function waitForRun(
  engine: Engine,
  runId: string,
  options: { readonly pollMs?: number; readonly signal?: AbortSignal } = {},
): Promise<RunRecord> {
  const pollMs = options.pollMs ?? 250;
  let wake: (() => void) | null = null;
  const stop = engine.context.wakeups.history.subscribe(runId, () => wake?.());
  try {
    for (;;) {
      // Registered before the read, so a commit in between wakes the wait below.
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, pollMs).unref();
        options.signal?.addEventListener('abort', () => resolve(), { once: true });
      });
      const run = await engine.runs.get(runId);
      if (isTerminalRun(run.status)) return run;
      if (options.signal?.aborted)
        throw new WeftError('wait_aborted', `stopped waiting for run ${runId}`, 499);
      await woken;
    }
  } finally {
    stop();
  }
}
