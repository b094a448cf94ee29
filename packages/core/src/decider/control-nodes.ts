import type { ControlFlowNode } from '../definition/node-types.js';
import type { DecisionContext } from './context.js';
import type { TimerPurpose } from './events.js';
import { activateLoop } from './loop.js';
import { activateMap } from './map.js';
import { activateWaitForEvent, onEventTimeout } from './signal.js';
import type { Arrival, TaskState } from './state.js';
import { activateSwitch } from './switch.js';
import { activateTerminate, activateTransform } from './transform.js';
import { activateWait, onWaitTimer } from './wait.js';

/** Starts a node the engine runs itself (each kind lives in its own module). */
export async function activateControl(
  ctx: DecisionContext,
  node: ControlFlowNode,
  iteration: string,
  waiting: TaskState | null,
  arrivals: readonly Arrival[],
): Promise<void> {
  switch (node.kind) {
    case 'switch':
      return activateSwitch(ctx, node, iteration, waiting, arrivals);
    case 'wait':
      return activateWait(ctx, node, iteration, waiting, arrivals);
    case 'wait_for_event':
      return activateWaitForEvent(ctx, node, iteration, waiting, arrivals);
    case 'loop':
      return activateLoop(ctx, node, iteration, waiting, arrivals);
    case 'map':
      return activateMap(ctx, node, iteration, waiting, arrivals);
    case 'transform':
      return activateTransform(ctx, node, iteration, waiting, arrivals);
    case 'terminate':
      return activateTerminate(ctx, node, iteration, waiting, arrivals);
  }
}

/** A timer of a wait or a wait_for_event node fired. */
export async function onControlTimer(ctx: DecisionContext, purpose: TimerPurpose): Promise<void> {
  switch (purpose.kind) {
    case 'wait':
      return onWaitTimer(ctx, purpose);
    case 'event_timeout':
      return onEventTimeout(ctx, purpose);
    case 'retry':
      return;
  }
}
