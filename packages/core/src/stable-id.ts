import { hash } from 'node:crypto';

/**
 * Identities computed from what they identify, so that deciding the same thing again gives the same id.
 * Pure: a hash, no clock and no randomness.
 */

function digest(parts: readonly (string | number)[]): Buffer {
  // One call on the whole text (each part followed by a NUL): the same bytes as hashing part by part, at
  // about half the cost (a decision computes two of these a task).
  let text = '';
  for (const part of parts) text += `${String(part)}\u0000`;
  return hash('sha256', text, 'buffer');
}

function format(bytes: Buffer): string {
  const hex = bytes.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** A UUID (version 8, name-based on SHA-256) that is always the same for the same parts. */
export function stableId(...parts: readonly (string | number)[]): string {
  const bytes = digest(parts);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return format(bytes);
}

/**
 * The id of a run started by a node: a version-7 UUID whose time is the decision's time (so runs still list
 * in start order) and whose other bits are a hash of the starting task's identity, attempt included. A retry
 * is a new attempt and so gets a new child; a redelivered start of the same attempt gets the same id and is
 * absorbed by the runs' primary key (invariant 10).
 */
export function childRunId(
  now: Date,
  parentRunId: string,
  nodeId: string,
  iteration: string,
  attempt: number,
): string {
  const bytes = digest(['weft.child-run', parentRunId, nodeId, iteration, attempt]);
  bytes.writeUIntBE(Math.max(0, Math.floor(now.getTime())), 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return format(bytes);
}

/**
 * The side-effect key of a node instance: the same for every attempt of one node of one run at one
 * iteration (a loop pass, a map item), and different for every other. A worker gives it to a service that
 * deduplicates requests (a payment provider's idempotency key), so a retried attempt repeats nothing that
 * an earlier attempt did. A UUID, so it fits wherever such keys are accepted.
 */
export function taskIdempotencyKey(runId: string, nodeId: string, iteration: string): string {
  return stableId('weft.task-key', runId, nodeId, iteration);
}
