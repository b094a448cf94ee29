import type { TransformNode } from '../../definition/node-types.js';
import { isJsonObject } from '../../json.js';
import { evaluateAt, positionOf } from '../scope.js';
import { putTask } from '../task-rows.js';
import type { NodeHandler } from './node-handler.js';
import { failAtStart } from './outcome.js';

/**
 * A transform computes its `value` mapping as its output, with no worker, and may set run variables with
 * its `vars` mapping (read later as `vars.<name>`).
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
