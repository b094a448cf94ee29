import type { Mailbox, RunEvent } from '@weft/core';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { LoadedTask } from '../store/store.js';

// What a decision reads, with its offloaded values fetched back from the blob store: the decider and its
// expressions always see values. Without a payload store, everything is returned as it is.

/** Loaded rows with offloaded inputs and outputs fetched back (the run lock is held meanwhile). */
export async function resolveRows(payloads: PayloadStore | null, rows: LoadedTask[]): Promise<LoadedTask[]> {
  if (!payloads || !rows.some((r) => payloads.isRef(r.input) || payloads.isRef(r.output))) return rows;
  return Promise.all(
    rows.map(async (r) =>
      payloads.isRef(r.input) || payloads.isRef(r.output)
        ? { ...r, input: await payloads.resolve(r.input), output: await payloads.resolve(r.output) }
        : r,
    ),
  );
}

/** An event with its offloaded payload fetched back (a signal's data, a child run's output). */
export async function resolveEvent(payloads: PayloadStore | null, event: RunEvent): Promise<RunEvent> {
  if (!payloads) return event;
  if (event.kind === 'signal_received' && payloads.isRef(event.data))
    return { ...event, data: await payloads.resolve(event.data) };
  if (event.kind === 'child_finished' && payloads.isRef(event.output))
    return { ...event, output: await payloads.resolve(event.output) };
  return event;
}

/** Loaded mailboxes with the offloaded data of their kept signals fetched back. */
export async function resolveMailboxes(
  payloads: PayloadStore | null,
  boxes: Map<string, Mailbox | null>,
): Promise<Map<string, Mailbox | null>> {
  if (!payloads) return boxes;
  for (const [key, box] of boxes) {
    if (!box?.buffered.some((b) => payloads.isRef(b.data))) continue;
    const buffered = await Promise.all(
      box.buffered.map(async (b) => ({ ...b, data: await payloads.resolve(b.data) })),
    );
    boxes.set(key, { ...box, buffered });
  }
  return boxes;
}
