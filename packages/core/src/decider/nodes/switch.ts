import type { SwitchNode } from '../../definition/node-types.js';
import { canonicalJson, type Json } from '../../json.js';
import type { DecisionContext } from '../context.js';
import { evaluateAt, positionOf } from '../scope.js';
import { putTask } from '../task-rows.js';
import type { NodeHandler } from './node-handler.js';
import { describeValue, failAtStart } from './outcome.js';

/**
 * A switch evaluates its expression and takes the outgoing edges whose `case` equals the value (as JSON:
 * the text "1" is not the number 1), or else its `default` edges. Every other edge passes a skip, so a
 * join after the switch still hears from the branches not taken. A value that matches no case, with no
 * default edge, fails the run and names the value.
 */
export const switchNode: NodeHandler<SwitchNode> = {
  async activate(ctx, node, reach) {
    const { iteration, waiting, arrivals } = reach;
    const mapping = ctx.workflow.mapping(node.id, 'expression');
    if (!mapping) throw new Error(`switch "${node.id}" has no compiled expression`);
    const evaluated = await evaluateAt(ctx, mapping, positionOf(ctx, node.id, iteration));
    if (!evaluated.ok) {
      failAtStart(ctx, node.id, reach, evaluated.message);
      return;
    }
    const value = evaluated.value;
    const { targets, cases } = choose(ctx, node.id, value);
    if (targets.length === 0) {
      const listed = cases.length > 0 ? cases.map((c) => JSON.stringify(c)).join(', ') : 'none';
      const message = `switch value ${JSON.stringify(value)} (${describeValue(value)}) matches no case (cases: ${listed}) and there is no default edge`;
      failAtStart(ctx, node.id, reach, message);
      return;
    }
    const output = { value, taken: targets };
    putTask(ctx, node.id, iteration, waiting, { status: 'completed', input: null, output, arrivals });
    ctx.record('switch.chose', output, { nodeId: node.id, iteration, attempt: 1 });
    await ctx.flow.propagate(node.id, iteration, true, new Set(targets));
  },
};

/** The targets a value selects: matching cases, else the default edges. Also every case value, for messages. */
function choose(ctx: DecisionContext, nodeId: string, value: Json): { targets: string[]; cases: Json[] } {
  const graph = ctx.workflow.graph;
  const key = canonicalJson(value);
  const matched: string[] = [];
  const defaults: string[] = [];
  const cases: Json[] = [];
  for (const target of graph.successors.get(nodeId) ?? []) {
    const when = graph.labels.get(`${nodeId}\u0000${target}`);
    if (when?.kind === 'default') defaults.push(target);
    if (when?.kind !== 'case') continue;
    cases.push(...when.values);
    if (when.values.some((v) => canonicalJson(v) === key)) matched.push(target);
  }
  return {
    targets: matched.length > 0 ? matched : defaults,
    cases: [...new Map(cases.map((c) => [canonicalJson(c), c])).values()],
  };
}
