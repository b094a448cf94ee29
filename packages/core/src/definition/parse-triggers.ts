import { compileExpression } from '../expr/expression.js';
import { compileMapping, type MappingSource } from '../expr/mapping.js';
import { describeLocated } from './located.js';
import { EVENT_NAME_PATTERN } from './patterns.js';
import type { MapReader } from './reader.js';
import type { Trigger } from './trigger-types.js';

/** Most triggers one definition may declare. */
export const MAX_TRIGGERS = 20;

/**
 * Reads a definition's `triggers`: a list of events that start a run of it.
 *
 *     triggers:
 *       - event: order.placed            # the event name
 *         filter: data.amount > 100      # optional: start only when this is true
 *         input: { order: data.id }      # optional mapping from the event; the event's data by default
 *         idempotency: data.id           # optional: runs are deduplicated on this instead of the event id
 *
 * Every expression reads the event only (`data`, `event.id`, `event.name`), never nodes: none has run yet.
 */
export function readTriggers(top: MapReader): Trigger[] | undefined {
  const entry = top.entry('triggers');
  if (!entry) return undefined;
  if (entry.value.kind !== 'seq') {
    top.problem(`must be a list of triggers, not ${describeLocated(entry.value)}`, entry.line, 'triggers');
    return undefined;
  }
  if (entry.value.items.length > MAX_TRIGGERS)
    top.problem(`may list at most ${MAX_TRIGGERS} triggers`, entry.line, 'triggers');
  const out: Trigger[] = [];
  for (const [i, item] of entry.value.items.entries()) {
    const path = `triggers[${i}]`;
    if (item.kind !== 'map') {
      top.problem(`must be a map with event, not ${describeLocated(item)}`, item.line, `triggers[${i}]`);
      continue;
    }
    const trigger = readTrigger(top.nested(item, path));
    if (trigger) out.push(trigger);
  }
  return out;
}

function readTrigger(r: MapReader): Trigger | undefined {
  const event = r.string('event', {
    required: true,
    pattern: EVENT_NAME_PATTERN,
    patternHint: 'is not a valid event name: use letters, digits, ".", "_", ":", "/" and "-"',
  });
  const filter = r.string('filter');
  const input = r.json('input');
  const idempotency = r.string('idempotency');
  r.done('a trigger (expected event, filter, input, idempotency)');
  let good = event !== undefined;
  for (const [field, source] of [
    ['filter', filter],
    ['idempotency', idempotency],
  ] as const) {
    if (source === undefined) continue;
    const compiled = compileExpression(source);
    if (!compiled.ok) {
      r.problem(
        `cannot parse expression ${JSON.stringify(source)}: ${compiled.error.message}`,
        r.lineOf(field),
        field,
      );
      good = false;
    } else if (compiled.value.refs.length + compiled.value.dynamicRefs.length > 0) {
      r.problem('reads nodes, but a trigger sees only the event (data, event)', r.lineOf(field), field);
      good = false;
    }
  }
  if (input !== undefined && input !== null) {
    const compiled = compileMapping(input, 'input');
    if (!compiled.ok) {
      for (const p of compiled.error) r.problem(p.message, r.lineOf('input'), p.path);
      good = false;
    } else if (compiled.value.refs.length + compiled.value.dynamicRefs.length > 0) {
      r.problem('reads nodes, but a trigger sees only the event (data, event)', r.lineOf('input'), 'input');
      good = false;
    }
  }
  if (!good || event === undefined) return undefined;
  return {
    event,
    filter: filter ?? null,
    input: (input ?? null) as MappingSource | null,
    idempotency: idempotency ?? null,
  };
}
