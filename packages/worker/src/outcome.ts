import type { Json, Report, ReportBase } from '@weft/client/tasks';
import { TerminalError } from './errors.js';

/**
 * A handler's result as a report. A result that cannot be sent as JSON (a circular object, a BigInt, a
 * `toJSON` that throws) fails its task for good with `output_not_serialisable` and the reason: the same
 * handler would return the same thing again, and a report that cannot be serialised would hold back every
 * other report of its batch.
 */
export function outputReport(base: ReportBase, taskType: string, output: unknown): Report {
  const value = output === undefined ? null : output;
  const problem = jsonProblem(value);
  if (problem === null) return { ...base, output: value as Json };
  return {
    ...base,
    error: {
      message: `the handler for ${taskType} returned an output that cannot be sent as JSON: ${problem}`,
      type: 'output_not_serialisable',
      retryable: false,
      details: { code: 'output_not_serialisable', reason: problem },
    },
  };
}

/** A handler's error as a report: retried unless it is a TerminalError. */
export function errorReport(base: ReportBase, error: unknown): Report {
  const e = error instanceof Error ? error : new Error(String(error));
  const details = e instanceof TerminalError && e.details !== undefined ? e.details : undefined;
  const detailsProblem = details === undefined ? null : jsonProblem(details);
  return {
    ...base,
    error: {
      message: e.message || e.name,
      type: e.name,
      ...(e.stack ? { stack: e.stack } : {}),
      retryable: !(e instanceof TerminalError),
      ...(details !== undefined
        ? { details: detailsProblem === null ? (details as Json) : { not_serialisable: detailsProblem } }
        : {}),
    },
  };
}

/** Why `value` cannot be serialised as JSON, or null when it can. */
function jsonProblem(value: unknown): string | null {
  // What never fails to serialise (a no-op handler's null, most often) is not written out to find so.
  const kind = typeof value;
  if (value === null || kind === 'string' || kind === 'number' || kind === 'boolean') return null;
  try {
    JSON.stringify(value);
    return null;
  } catch (e) {
    return e instanceof Error ? e.message.split('\n')[0]! : String(e);
  }
}
