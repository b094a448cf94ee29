import type { TerminateNode } from '../../definition/node-types.js';
import type { Json } from '../../json.js';
import { evaluateAt, positionOf } from '../scope.js';
import { putTask } from '../task-rows.js';
import type { NodeHandler } from './node-handler.js';
import { failAtStart } from './outcome.js';

/**
 * A terminate node ends the run at once: completed with its `output` mapping (null without one), or
 * failed with its `reason`. Unfinished work elsewhere in the run is cancelled.
 */
export const terminateNode: NodeHandler<TerminateNode> = {
  async activate(ctx, node, reach) {
    const { iteration, waiting, arrivals } = reach;
    const field = node.status === 'completed' ? 'output' : 'reason';
    const mapping = ctx.workflow.mapping(node.id, field);
    let value: Json = null;
    if (mapping) {
      const evaluated = await evaluateAt(ctx, mapping, positionOf(ctx, node.id, iteration));
      if (!evaluated.ok) {
        failAtStart(ctx, node.id, reach, evaluated.message);
        return;
      }
      value = evaluated.value;
    }
    putTask(ctx, node.id, iteration, waiting, { status: 'completed', input: null, output: value, arrivals });
    if (node.status === 'failed') {
      const reason =
        value === null
          ? `the run was ended by node "${node.id}"`
          : typeof value === 'string'
            ? value
            : JSON.stringify(value);
      ctx.flow.failRun({ message: reason, node: node.id, reason: 'terminated' });
      return;
    }
    ctx.emit({ kind: 'cancel_open_work', reason: `the run was completed by node "${node.id}"` });
    ctx.emit({ kind: 'finish_run', status: 'completed', output: value, error: null });
    ctx.record('run.completed', { output: value, by_node: node.id });
  },
};
