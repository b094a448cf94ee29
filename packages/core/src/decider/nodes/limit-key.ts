import type { TaskNode } from '../../definition/node-types.js';
import { canonicalJson } from '../../json.js';
import type { DecisionContext } from '../context.js';
import { evaluateAt, positionOf } from '../scope.js';

/** Buckets limit keys fold into when the engine sets no other number. */
export const DEFAULT_LIMIT_KEYS = 1000;

/**
 * The limit-key bucket of a task node's attempt (`b` and a number), or undefined for a node without
 * `limit_key`. The key's value (text as it is, anything else as canonical JSON; nothing, or an expression that
 * fails, as the empty text) is hashed into one of `limitKeys` buckets, so the number of live keys per limit is
 * bounded whatever the data, and a retry or a resume, evaluating the same expression over the same run, finds
 * the same bucket. Two values in one bucket share its permits.
 */
export async function limitKeyOf(
  ctx: DecisionContext,
  node: TaskNode,
  iteration: string,
): Promise<string | undefined> {
  if (node.limitKey === undefined) return undefined;
  const mapping = ctx.workflow.mapping(node.id, 'limit_key');
  if (!mapping) return undefined;
  const evaluated = await evaluateAt(ctx, mapping, positionOf(ctx, node.id, iteration));
  const value = evaluated.ok ? evaluated.value : null;
  const text = value === null ? '' : typeof value === 'string' ? value : canonicalJson(value);
  const buckets = Math.max(1, ctx.options.limitKeys ?? DEFAULT_LIMIT_KEYS);
  return `b${fnv1a(text) % buckets}`;
}

/** FNV-1a over the text's UTF-16 code units: a fixed, portable hash (no randomness, invariant 21). */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
