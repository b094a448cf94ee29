import type { Json } from '../../json.js';
import type { DecisionContext } from '../context.js';
import { evaluateAt, innermost, itemOf, positionOf } from '../scope.js';

/**
 * What a node hands on to its work: its mapping `field` (a task's `input`, an event's `payload`, an http
 * node's `request`) evaluated where the node is. Without one, the item of the map around it, or the run
 * input outside maps.
 */
export async function nodeInput(
  ctx: DecisionContext,
  nodeId: string,
  iteration: string,
  field = 'input',
): Promise<{ ok: true; value: Json } | { ok: false; message: string }> {
  const mapping = ctx.workflow.mapping(nodeId, field);
  const at = positionOf(ctx, nodeId, iteration);
  if (!mapping) {
    const map = innermost(ctx, at.container, 'map');
    return { ok: true, value: map === null ? ctx.run.input : itemOf(ctx, map, iteration) };
  }
  return evaluateAt(ctx, mapping, at);
}
