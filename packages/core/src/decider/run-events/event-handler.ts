import type { DecisionContext } from '../context.js';
import type { RunEvent, RunEventKind } from '../events.js';

/** Decides one event in a decision context (what `decide` does, inside a decision). */
export type DecideEvent = (ctx: DecisionContext, event: RunEvent) => Promise<void>;

/**
 * What the decider does for one kind of run event. `decideNext` decides an event that follows from this
 * one (a child's failure, a task finished by hand) in the same decision, so no handler imports the
 * event table.
 */
export type EventHandler<K extends RunEventKind> = (
  ctx: DecisionContext,
  event: Extract<RunEvent, { kind: K }>,
  decideNext: DecideEvent,
) => Promise<void>;
