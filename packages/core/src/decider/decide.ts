import type { Workflow } from '../definition/workflow.js';
import type { Action } from './actions.js';
import { DecisionContext } from './context.js';
import type { DecideOptions } from './decide-options.js';
import type { RunEvent } from './events.js';
import type { MailboxKey } from './mailbox.js';
import { decideEvent } from './run-events/event-table.js';
import { type DecisionState, MissingState } from './state.js';
import { createFlow } from './traversal.js';

/** What one decision gives back: the actions to write, or the node instances it still needs loaded. */
export type DecideResult =
  | { readonly kind: 'decided'; readonly actions: readonly Action[]; readonly state: DecisionState }
  | {
      readonly kind: 'needs';
      readonly keys: readonly { readonly nodeId: string; readonly iteration: string }[];
      /** Signal mailboxes to load, when the decision reads any. */
      readonly mailboxes?: readonly MailboxKey[];
    };

/**
 * The decider: given a workflow, the part of a run's state it needs, one event and the time, says what
 * changes. Pure: no database, clock, randomness or network. When it reads a node instance the shell did
 * not load, it returns `needs` and the shell loads it and calls again, which gives the same answer.
 *
 * Each event kind has its handler (run-events/event-table.ts) and each node kind its handler with one
 * method per event that concerns it (nodes/node-table.ts); they move control through the graph with
 * `ctx.flow` (traversal.ts).
 */
export async function decide(
  workflow: Workflow,
  state: DecisionState,
  event: RunEvent,
  now: Date,
  options: DecideOptions = {},
): Promise<DecideResult> {
  const ctx = new DecisionContext(workflow, state, now, options, createFlow);
  try {
    await decideEvent(ctx, event);
  } catch (e) {
    if (e instanceof MissingState)
      return { kind: 'needs', keys: e.keys, ...(e.mailboxes.length > 0 ? { mailboxes: e.mailboxes } : {}) };
    throw e;
  }
  return { kind: 'decided', actions: ctx.actions, state: ctx.state() };
}
