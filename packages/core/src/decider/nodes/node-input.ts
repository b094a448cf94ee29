import type { Json } from '../../json.js';
import type { DecisionContext } from '../context.js';
import { evaluateAt, innermost, itemOf, positionOf } from '../scope.js';
import type { Reach } from './node-handler.js';
import { failAtStart } from './outcome.js';

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

/**
 * The input of a node being reached (see `nodeInput`) and the attempt it starts (its waiting row's, or 1);
 * null once an input that could not be computed failed the node, and the run.
 */
export async function startingInput(
  ctx: DecisionContext,
  nodeId: string,
  reach: Reach,
  field = 'input',
): Promise<{ value: Json; attempt: number } | null> {
  const attempt = reach.waiting?.attempt ?? 1;
  const input = await nodeInput(ctx, nodeId, reach.iteration, field);
  if (input.ok) return { value: input.value, attempt };
  failAtStart(ctx, nodeId, reach, input.message, attempt);
  return null;
}
