import type { NodeDef, RetryPolicy } from '../../definition/node-types.js';
import type { Json } from '../../json.js';
import type { DecisionContext } from '../context.js';
import { handlerOf } from '../nodes/node-table.js';

/** The retry policy a failed attempt of this node is judged by, or null for nodes that never retry. */
export function retryPolicyOf(node: NodeDef): RetryPolicy | null {
  return node.kind === 'task' || node.kind === 'http' || node.kind === 'sub_workflow' ? node.retry : null;
}

/**
 * Schedules the attempt after `failedAttempt` with the same input, through the node kind's `retry`;
 * `delayMs` (a task's backoff, held back by the dispatcher) is 0 for at once.
 */
export async function scheduleRetry(
  ctx: DecisionContext,
  nodeId: string,
  iteration: string,
  failedAttempt: number,
  input: Json | null,
  delayMs = 0,
): Promise<void> {
  const node = ctx.workflow.node(nodeId);
  await handlerOf(node).retry?.(ctx, node, { iteration, attempt: failedAttempt, input }, delayMs);
}
