import type { Json } from '@weft/core';
import type { WriteSet } from '../store/write-set.js';
import type { BlobUses } from './blob-uses.js';
import type { PayloadStore } from './payload-store.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Replaces large values in a pass's writes by blob references, just before they are written. These values
 * were computed by the engine (a task input from a mapping, a run output, a history event carrying an
 * output), so the hard limit does not apply: what came from outside was checked on the way in.
 *
 * Outbox rows are left whole: what they carry (a child's input, an event's payload, a status callback's
 * output) goes to a receiver that cannot read the blob store, so it is the value itself (test: "reach
 * sinks and child runs as values, and come back from the child as a value"). A child's output on its way
 * to its parent's inbox is offloaded like a signal's data; the parent's decision fetches it back.
 *
 * Each reference a row will hold, offloaded now or carried whole from another row (a signal's data delivered
 * as an output), is noted in `uses` under the row's run (invariant 30). A reference nested inside a value is
 * one its run already holds (a history event carrying the output of one of the run's own attempts).
 */
export async function offloadWrites(payloads: PayloadStore, w: WriteSet, uses: BlobUses): Promise<void> {
  const jobs: Promise<void>[] = [];
  const put = <T extends object, K extends keyof T>(runId: string, row: T, key: K, what: string) => {
    const value = row[key] as unknown as Json | undefined;
    if (value === undefined || value === null || typeof value !== 'object') {
      if (typeof value !== 'string' || value.length * 3 < payloads.config.thresholdBytes) return;
    }
    jobs.push(
      payloads.offload(value, what, { enforceMax: false }).then((stored) => {
        uses.note(runId, stored, value);
        if (stored !== value) (row as Mutable<T>)[key] = stored as unknown as T[K];
      }),
    );
  };
  for (const row of w.newTasks) {
    put(row.runId, row, 'input', 'a task input');
    put(row.runId, row, 'output', 'a task output');
  }
  for (const row of w.taskUpdates) {
    put(row.runId, row, 'input', 'a task input');
    put(row.runId, row, 'output', 'a task output');
  }
  for (const row of w.runUpdates) put(row.runId, row, 'output', 'a run output');
  for (const row of w.history) put(row.runId, row, 'data', 'a history event');
  for (const [i, row] of w.inboxAppend.entries()) {
    if (row.event.kind !== 'child_finished') continue;
    const event = { ...row.event };
    put(row.runId, event, 'output', 'a child run output');
    jobs.push(
      Promise.resolve().then(() => {
        w.inboxAppend[i] = { ...row, event };
      }),
    );
  }
  // Signals kept until a node waits for them.
  for (const row of w.mailboxes) {
    const buffered = row.mailbox.buffered.map((b) => ({ ...b }));
    for (const b of buffered) put(row.runId, b, 'data', 'a signal');
    jobs.push(
      Promise.resolve().then(() => {
        (row as Mutable<typeof row>).mailbox = { ...row.mailbox, buffered };
      }),
    );
  }
  if (jobs.length > 0) await Promise.all(jobs);
}
