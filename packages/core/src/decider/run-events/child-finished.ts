import { handlerOf } from '../nodes/node-table.js';
import type { EventHandler } from './event-handler.js';

/**
 * A child run started by a node ended. The event reaches the parent's inbox in the child's own
 * transaction, so it exists only if the child's end committed (invariant 7: the child's outcome comes
 * back). The node's kind decides what it means; a failure it returns is decided next, so the node's retry
 * policy applies as for any failure.
 */
export const childFinished: EventHandler<'child_finished'> = async (ctx, event, decideNext) => {
  const node = ctx.workflow.node(event.nodeId);
  const failure = (await handlerOf(node).childFinished?.(ctx, node, event)) ?? null;
  if (failure) await decideNext(ctx, failure);
};
