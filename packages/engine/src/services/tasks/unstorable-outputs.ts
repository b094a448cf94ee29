import { type StorageProblem, storageProblem, type TaskError, WeftError } from '@weft/core';
import { BlobUses } from '../../payloads/blob-uses.js';
import type { TaskReport } from '../../store/records.js';
import type { TaskDeps } from './task-deps.js';

/**
 * A worker's output PostgreSQL cannot store fails its attempt for good (`output_not_storable`): the same
 * handler would send the same output again, so neither refusing the report nor retrying helps. Most such
 * outputs are caught before any statement (see `storageProblem`); one PostgreSQL refuses anyway is caught
 * by its error class.
 */

/**
 * The reports with large outputs offloaded; an output over the hard limit, or one PostgreSQL cannot store
 * (U+0000 in its text, say), fails its attempt for good with a message that says so (a worker retrying the
 * same report would never get it through; refusing the report would leave the task to be retried).
 */
export function storableOutputs(
  payloads: TaskDeps['payloads'],
  reports: readonly TaskReport[],
): Promise<TaskReport[]> {
  return Promise.all(
    reports.map(async (r): Promise<TaskReport> => {
      if (r.outcome.kind !== 'completed') return r;
      const unstorable = storageProblem(r.outcome.output, 'output');
      if (unstorable) return notStorableReport(r, unstorable);
      try {
        const output = await payloads.offload(r.outcome.output, `the output of task ${r.taskId}`);
        return output === r.outcome.output ? r : { ...r, outcome: { kind: 'completed', output } };
      } catch (e) {
        if (!(e instanceof WeftError)) throw e;
        return {
          ...r,
          outcome: { kind: 'failed', error: { message: e.message, reason: 'error', retryable: false } },
        };
      }
    }),
  );
}

/**
 * The outputs `storableOutputs` offloaded, by run, with the values they stand for: guarded in the reports'
 * transaction (invariant 30). A report refused later keeps its run's use recorded, which only keeps a blob
 * until that run is purged.
 */
export function reportBlobUses(reports: readonly TaskReport[], offloaded: readonly TaskReport[]): BlobUses {
  const uses = new BlobUses();
  for (const [i, r] of offloaded.entries()) {
    const before = reports[i]?.outcome;
    if (r.outcome.kind === 'completed' && before?.kind === 'completed')
      uses.note(r.runId, r.outcome.output, before.output);
  }
  return uses;
}

/** True for PostgreSQL's refusal of a value: class 22 (data exception) or 54 (program limit exceeded). */
export function isValueRefusal(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && /^(22|54)[0-9A-Z]{3}$/.test(code);
}

/** The report of `report`'s attempt failing for good because its output cannot be stored. */
export function notStorableReport(report: TaskReport, problem: StorageProblem): TaskReport {
  return { ...report, outcome: { kind: 'failed', error: notStorable(report.taskId, problem) } };
}

/** The failure of an attempt whose output cannot be stored: terminal, naming the bad part of the output. */
export function notStorable(taskId: string, problem: StorageProblem): TaskError {
  return {
    message: `the output of task ${taskId} cannot be stored: ${problem.path} ${problem.message}`,
    reason: 'error',
    retryable: false,
    type: 'output_not_storable',
    details: { code: 'output_not_storable', path: problem.path },
  };
}
