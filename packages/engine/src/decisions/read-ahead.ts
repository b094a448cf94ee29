import { childIteration, iterationIndex, parentIteration, taskKey } from '@weft/core';

/** A node instance a decision asks for: its node and iteration. */
export interface InstanceKey {
  readonly nodeId: string;
  readonly iteration: string;
}

/** Most instances read ahead of one miss: a batch of reports larger than this takes a few more reads. */
const MOST_AHEAD = 512;

/**
 * The node instances to read when a decision asks for `keys`, with `ahead` events of the same run still to
 * decide in this transaction: the keys, and for each key of a loop pass or map item, the same node's next
 * `ahead` passes or items that the decision has not seen. Finishing map items one event after another
 * asks for the next item each time (item 500, then 501, ...); read one by one, that is a round trip per
 * event with the run's lock held. Read ahead, it is one. It is read under the run's lock after the claim,
 * like every read of the decision (invariants 1 and 2); a key the decision has seen (and perhaps changed)
 * is never read again, so its state is never replaced by the stored row (decision 0174; test: "reads the
 * items it starts in one round trip, the same per event at 500 and 5,000 items").
 */
export function withReadAhead(
  keys: readonly InstanceKey[],
  seen: ReadonlyMap<string, unknown>,
  ahead: number,
): { keys: InstanceKey[]; asked: ReadonlySet<string> } {
  const asked = new Set(keys.map((k) => taskKey(k.nodeId, k.iteration)));
  const out = [...keys];
  const count = Math.min(ahead, MOST_AHEAD);
  for (const k of keys) {
    const index = iterationIndex(k.iteration);
    if (index < 0) continue;
    const parent = parentIteration(k.iteration);
    for (let next = index + 1; next <= index + count; next++) {
      const iteration = childIteration(parent, next);
      const key = taskKey(k.nodeId, iteration);
      if (seen.has(key) || asked.has(key)) continue;
      asked.add(key);
      out.push({ nodeId: k.nodeId, iteration });
    }
  }
  return { keys: out, asked };
}
