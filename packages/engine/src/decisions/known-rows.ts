import { type Mailbox, type MailboxKey, mailboxKey, type TaskState, taskKey } from '@weft/core';
import type { LoadedTask, StateKey, StoreTx } from '../store/store.js';

/** The node instances read for a batch of runs: each run's task states and row ids, by task key. */
export class KnownRows {
  private readonly states = new Map<string, Map<string, TaskState>>();
  private readonly ids = new Map<string, Map<string, string>>();

  /** Remembers loaded rows (a later row of a node instance replaces an earlier one). */
  add(rows: readonly LoadedTask[]): void {
    for (const row of rows) {
      const { id, runId, ...state } = row;
      const key = taskKey(row.nodeId, row.iteration);
      inner(this.states, runId).set(key, state);
      inner(this.ids, runId).set(key, id);
    }
  }

  /** Fresh copies of what is known of one run: its task states and its row ids. */
  ofRun(runId: string): { tasks: Map<string, TaskState | null>; ids: Map<string, string> } {
    return {
      tasks: new Map<string, TaskState | null>(this.states.get(runId) ?? []),
      ids: new Map(this.ids.get(runId) ?? []),
    };
  }
}

/** State keys, each once (`run/key`). */
export function dedupe(keys: readonly StateKey[]): StateKey[] {
  const seen = new Map<string, StateKey>();
  for (const k of keys) seen.set(`${k.runId}/${taskKey(k.nodeId, k.iteration)}`, k);
  return [...seen.values()];
}

/** Items grouped by a key, in order. */
export function group<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

/** Loads signal mailboxes for a decision: absent ones are known to be empty (null). */
export async function loadMailboxes(
  tx: StoreTx,
  runId: string,
  keys: readonly MailboxKey[],
): Promise<Map<string, Mailbox | null>> {
  const out = new Map<string, Mailbox | null>(keys.map((k) => [mailboxKey(k.name, k.correlation), null]));
  for (const row of await tx.loadMailboxes(keys.map((k) => ({ runId, ...k }))))
    out.set(mailboxKey(row.mailbox.name, row.mailbox.correlation), row.mailbox);
  return out;
}

/** The map of `outer` at `key`, made when missing. */
export function inner<K, V extends object>(
  outer: Map<K, V>,
  key: K,
  make: () => V = () => new Map() as unknown as V,
): V {
  let value = outer.get(key);
  if (!value) {
    value = make();
    outer.set(key, value);
  }
  return value;
}
