import { compileExpression, type ExpressionScope } from '../expr/expression.js';
import { compileMapping } from '../expr/mapping.js';
import type { Json } from '../json.js';
import { err, ok, type Result } from '../result.js';
import type { Trigger } from './trigger-types.js';

/** An event as a trigger sees it. */
export interface TriggerEvent {
  readonly id: string;
  readonly name: string;
  readonly data: Json;
}

/** What a matching trigger starts: the run's input and the key its runs are deduplicated on. */
export interface TriggerMatch {
  readonly input: Json;
  /** The event id, or the value of the trigger's `idempotency` expression. */
  readonly key: string;
}

/**
 * Decides whether `trigger` starts a run for `event` and with what. `null` when the event's name differs
 * or the filter is not `true` (a filter that reads a field the event lacks is simply not met). An error
 * says why an expression failed, or an input mapping or idempotency key that resolved to nothing.
 */
export async function matchTrigger(
  trigger: Trigger,
  event: TriggerEvent,
  now: Date,
): Promise<Result<TriggerMatch | null, string>> {
  if (trigger.event !== event.name) return ok(null);
  const scope: ExpressionScope = { input: event.data, nodes: {}, vars: {}, run: {}, data: event.data, event };
  if (trigger.filter !== null) {
    const passed = await evaluate(trigger.filter, scope, now);
    if (!passed.ok) return err(`filter: ${passed.error}`);
    if (passed.value !== true) return ok(null);
  }
  let input: Json = event.data;
  if (trigger.input !== null) {
    const mapping = compileMapping(trigger.input, 'input');
    if (!mapping.ok) return err(mapping.error.map((p) => p.message).join('; '));
    const mapped = await mapping.value.evaluate(scope, now);
    if (!mapped.ok) return err(`${mapped.error.path}: ${mapped.error.message}`);
    input = mapped.value;
  }
  let key = event.id;
  if (trigger.idempotency !== null) {
    const value = await evaluate(trigger.idempotency, scope, now);
    if (!value.ok) return err(`idempotency: ${value.error}`);
    if (value.value === undefined || value.value === null)
      return err(`idempotency: ${JSON.stringify(trigger.idempotency)} resolved to nothing for this event`);
    key = typeof value.value === 'string' ? value.value : JSON.stringify(value.value);
  }
  return ok({ input, key });
}

async function evaluate(source: string, scope: ExpressionScope, now: Date): Promise<Result<unknown, string>> {
  const compiled = compileExpression(source);
  if (!compiled.ok) return err(`cannot parse ${JSON.stringify(source)}: ${compiled.error.message}`);
  const result = await compiled.value.evaluate(scope, now);
  return result.ok ? ok(result.value) : err(`${source}: ${result.error.message}`);
}
