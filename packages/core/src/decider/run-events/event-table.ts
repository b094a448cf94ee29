import type { DecisionContext } from '../context.js';
import type { RunEvent, RunEventKind } from '../events.js';
import { onCompensating } from '../saga.js';
import { childFinished } from './child-finished.js';
import type { EventHandler } from './event-handler.js';
import { nodeCompleted } from './node-completed.js';
import { nodeFailed } from './node-failed.js';
import { operatorEvent } from './operator-event.js';
import { reportRefused } from './report-refused.js';
import { runForked } from './run-forked.js';
import { runStarted } from './run-started.js';
import { runSwept } from './run-swept.js';
import { signalReceived } from './signal-received.js';
import { timerFired } from './timer-fired.js';

/** Every run event kind's handler, by kind: a kind missing here does not compile. */
const EVENT_HANDLERS: { readonly [K in RunEventKind]: EventHandler<K> } = {
  run_started: runStarted,
  node_completed: nodeCompleted,
  node_failed: nodeFailed,
  timer_fired: timerFired,
  signal_received: (ctx, event) => signalReceived(ctx, event),
  child_finished: childFinished,
  // Only a compensating run has one, and the saga takes it before the table is asked.
  compensation_due: async () => {},
  run_swept: runSwept,
  run_forked: runForked,
  report_refused: reportRefused,
  run_cancelled: operatorEvent,
  run_paused: operatorEvent,
  run_resumed: operatorEvent,
  run_terminated: operatorEvent,
  run_retried: operatorEvent,
  run_rerun: operatorEvent,
  run_migrated: operatorEvent,
  task_overridden: operatorEvent,
  node_skipped: operatorEvent,
};

/**
 * Decides one event in a decision: a compensating run's saga takes the events of its compensations
 * (saga.ts); every other event goes to its kind's handler.
 */
export async function decideEvent(ctx: DecisionContext, event: RunEvent): Promise<void> {
  if (ctx.run.status === 'compensating' && (await onCompensating(ctx, event))) return;
  const handler = EVENT_HANDLERS[event.kind] as EventHandler<RunEventKind>;
  await handler(ctx, event as never, decideEvent);
}
