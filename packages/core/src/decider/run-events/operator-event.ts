import type { DecisionContext } from '../context.js';
import { decideOperatorEvent } from '../operator/decide-operator.js';
import type { OperatorEvent } from '../operator-events.js';
import type { DecideEvent } from './event-handler.js';

/**
 * An operator's action (operator/decide-operator.ts). What follows from one (a task finished by hand) is
 * decided now on a running run, and kept in the inbox for resume on a paused one.
 */
export async function operatorEvent(
  ctx: DecisionContext,
  event: OperatorEvent,
  decideNext: DecideEvent,
): Promise<void> {
  for (const next of await decideOperatorEvent(ctx, event)) {
    if (ctx.run.status === 'running') await decideNext(ctx, next);
    else if (ctx.run.status === 'paused') ctx.emit({ kind: 'defer', event: next });
  }
}
