import type { Json } from '../json.js';

/**
 * A run's mailbox for one signal name and correlation key: the signals that arrived while no node was
 * waiting for them (oldest first), and the wait_for_event node instances waiting for one (in the order
 * they started waiting). At most one of the two lists is non-empty: a signal goes to the first waiter,
 * and a node that starts waiting takes the oldest buffered signal.
 */
export interface Mailbox {
  readonly name: string;
  /** The correlation key; empty for signals and waits that name none. */
  readonly correlation: string;
  readonly buffered: readonly BufferedSignal[];
  readonly waiters: readonly SignalWaiter[];
}

/** A signal kept until a node waits for it. */
export interface BufferedSignal {
  readonly id: string;
  readonly data: Json;
  readonly by: string;
  /** When it arrived (ISO 8601). */
  readonly at: string;
}

/** A wait_for_event node instance waiting for a signal. */
export interface SignalWaiter {
  readonly nodeId: string;
  readonly iteration: string;
  readonly attempt: number;
}

/** Which mailbox: signal name and correlation key. */
export interface MailboxKey {
  readonly name: string;
  readonly correlation: string;
}

/** Most signals kept for one name and key while nothing waits for them; more are refused. */
export const MAX_BUFFERED_SIGNALS = 100;

/** The key of a mailbox in maps. */
export function mailboxKey(name: string, correlation: string): string {
  return `${name}\u0000${correlation}`;
}

/** An empty mailbox. */
export function emptyMailbox(name: string, correlation: string): Mailbox {
  return { name, correlation, buffered: [], waiters: [] };
}
