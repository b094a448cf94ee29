import { type Json, type RunError, WeftError } from '@weft/core';
import type { RunRecord } from '@weft/engine';

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
