/** What operators read that no decision needs: workers seen, the outbox backlog, run counts. */

/** A worker that asked for tasks, as remembered by the servers it asked. */
export interface WorkerSighting {
  readonly namespace: string;
  /** The name the worker gives in its polls. */
  readonly name: string;
  /** The task types it asked for (every type seen since the previous write, for a worker that varies them). */
  readonly taskTypes: readonly string[];
  /** When it was first seen (set by the store on the first write). */
  readonly firstSeenAt?: Date;
  readonly lastSeenAt: Date;
}

/** The outbox of one destination: messages waiting, failing and given up on. */
export interface OutboxBacklog {
  readonly destination: string;
  /** Waiting for their first delivery. */
  readonly pending: number;
  /** Failed at least once and waiting to be tried again. */
  readonly retrying: number;
  /** Given up on (dead letters), until replayed. */
  readonly dead: number;
  /** The oldest message still to deliver. */
  readonly oldestAt: Date | null;
  /** The next time a delivery is due. */
  readonly nextAttemptAt: Date | null;
  /** The last error of the most recent message that failed. */
  readonly lastError: string | null;
}

/**
 * The id range a run id prefix covers: `0190a1` covers every id from `0190a100-0000-…` to
 * `0190a1ff-ffff-…`. A whole id covers itself. Dashes may be given or left out. Null when the text is not
 * the start of a UUID.
 */
export function runIdRange(prefix: string): { from: string; to: string } | null {
  const hex = prefix.trim().toLowerCase().replaceAll('-', '');
  if (!/^[0-9a-f]{1,32}$/.test(hex)) return null;
  const shape = (h: string) =>
    `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  return { from: shape(hex.padEnd(32, '0')), to: shape(hex.padEnd(32, 'f')) };
}
