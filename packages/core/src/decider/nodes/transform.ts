import { checkAttributes } from '../../attributes.js';
import type { TransformNode } from '../../definition/node-types.js';
import { isJsonObject } from '../../json.js';
import { evaluateAt, positionOf } from '../scope.js';
import { putTask } from '../task-rows.js';
import type { NodeHandler } from './node-handler.js';
import { failAtStart } from './outcome.js';

/**
 * A transform computes its `value` mapping as its output, with no worker, may set run variables with
 * its `vars` mapping (read later as `vars.<name>`), and search attributes of the run with `attributes`.
 */
export const transformNode: NodeHandler<TransformNode> = {
  async activate(ctx, node, reach) {
    const { iteration, waiting, arrivals } = reach;
    const at = positionOf(ctx, node.id, iteration);
    const value = await evaluateAt(ctx, ctx.workflow.mapping(node.id, 'value')!, at);
    if (!value.ok) {
      failAtStart(ctx, node.id, reach, value.message);
      return;
    }
    const varsMapping = ctx.workflow.mapping(node.id, 'vars');
    if (varsMapping) {
      const vars = await evaluateAt(ctx, varsMapping, at);
      if (!vars.ok || !isJsonObject(vars.value)) {
        failAtStart(ctx, node.id, reach, vars.ok ? 'vars must give an object' : vars.message);
        return;
      }
      ctx.emit({ kind: 'set_vars', values: vars.value });
      ctx.record('vars.set', { vars: vars.value }, { nodeId: node.id, iteration, attempt: 1 });
    }
    if (!(await setAttributes(ctx, node, reach, at))) return;
    putTask(ctx, node.id, iteration, waiting, {
      status: 'completed',
      input: null,
      output: value.value,
      arrivals,
    });
    ctx.record('node.completed', { output: value.value }, { nodeId: node.id, iteration, attempt: 1 });
    await ctx.flow.propagate(node.id, iteration, true);
  },
};

/**
 * Sets the run's search attributes from the node's `attributes` mapping, if it has one. Attributes that are
 * not an object of names to text, numbers or booleans fail the node, naming what is wrong: the same data would
 * fail the same way again (invariant 22). Returns false when the node failed.
 */
async function setAttributes(
  ctx: Parameters<NodeHandler<TransformNode>['activate']>[0],
  node: TransformNode,
  reach: Parameters<NodeHandler<TransformNode>['activate']>[2],
  at: ReturnType<typeof positionOf>,
): Promise<boolean> {
  const mapping = ctx.workflow.mapping(node.id, 'attributes');
  if (!mapping) return true;
  const evaluated = await evaluateAt(ctx, mapping, at);
  if (!evaluated.ok) {
    failAtStart(ctx, node.id, reach, evaluated.message);
    return false;
  }
  const attributes = checkAttributes(evaluated.value);
  if (!attributes.ok) {
    failAtStart(ctx, node.id, reach, `attributes: ${attributes.error}`);
    return false;
  }
  ctx.emit({ kind: 'set_attributes', values: attributes.value });
  ctx.record(
    'attributes.set',
    { attributes: attributes.value },
    { nodeId: node.id, iteration: reach.iteration, attempt: 1 },
  );
  return true;
}
