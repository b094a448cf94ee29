import type { MappingSource } from '../expr/mapping.js';
import type { MapReader } from './reader.js';
import type { RetryPolicy } from './types.js';

/**
 * What undoes a completed task when its run fails for good (saga compensation): a task of another type,
 * run by a worker like any task, with an input computed from the run (the compensated node's own output
 * included) when compensation reaches it.
 */
export interface Compensation {
  readonly taskType: string;
  /** Mapping that computes the compensation's input; the compensated attempt's output when null. */
  readonly input: MappingSource | null;
  readonly retry: RetryPolicy;
  /** Longest one compensation attempt may run; null for no limit. */
  readonly timeoutMs: number | null;
}

/** Everything `readCompensation` needs from the definition reader (kept here to avoid an import cycle). */
export interface CompensationParts {
  readonly taskTypePattern: RegExp;
  readonly maxTimeoutMs: number;
  readonly retry: (reader: MapReader, base: RetryPolicy) => RetryPolicy;
  readonly defaults: { readonly retry: RetryPolicy; readonly timeoutMs: number | null };
}

/** Reads a task node's `compensate` field, if it has one. */
export function readCompensation(r: MapReader, parts: CompensationParts): Compensation | undefined {
  if (!r.has('compensate')) return undefined;
  const reader = r.map('compensate');
  if (!reader) return undefined;
  const taskType = reader.string('task_type', {
    required: true,
    pattern: parts.taskTypePattern,
    patternHint: 'is not a valid task type: use letters, digits, ".", "_", ":", "/" and "-"',
  });
  const input = reader.json('input');
  const retry = parts.retry(reader, parts.defaults.retry);
  const timeoutMs =
    reader.duration('timeout', { minMs: 1, maxMs: parts.maxTimeoutMs }) ?? parts.defaults.timeoutMs;
  reader.done('a compensation (expected task_type, input, retry, timeout)');
  if (taskType === undefined) return undefined;
  return { taskType, input: input === undefined ? null : input, retry, timeoutMs };
}

const SUFFIX = '.compensate';

/**
 * The node id a compensation's attempts are stored under: `<node>.compensate`, at the compensated
 * instance's iteration. Node ids cannot contain a dot, so it never meets a node of the graph.
 */
export function compensationNodeId(nodeId: string): string {
  return `${nodeId}${SUFFIX}`;
}

/** The compensated node of a compensation's node id, or null for any other id. */
export function compensatedNodeOf(nodeId: string): string | null {
  return nodeId.endsWith(SUFFIX) ? nodeId.slice(0, -SUFFIX.length) : null;
}

/**
 * The node id of a run's saga log: one row (iteration `''`) whose output lists the compensable node
 * instances in the order their completions were decided, and how far compensation has gone.
 */
export const SAGA_LOG_NODE = 'weft.saga';
