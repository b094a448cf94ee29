import type { EventNode } from '../../definition/node-types.js';
import { stableId } from '../../stable-id.js';
import type { EventMessage } from '../effects.js';
import { putTask } from '../task-rows.js';
import type { NodeHandler } from './node-handler.js';
import { startingInput } from './node-input.js';

/**
 * An event node publishes its payload to a sink configured on the server and moves on: the message
 * leaves through the outbox with the decision, under an id derived from the attempt (`{ event_id }`, its
 * output), so consumers can drop redeliveries.
 */
export const eventNode: NodeHandler<EventNode> = {
  async activate(ctx, node, reach) {
    const { iteration, waiting, arrivals } = reach;
    const payload = await startingInput(ctx, node.id, reach, 'payload');
    if (!payload) return;
    const { attempt } = payload;
    const at = { nodeId: node.id, iteration, attempt };
    const message: EventMessage = {
      id: stableId('weft.event', ctx.run.id, node.id, iteration, attempt),
      type: node.topic ?? node.id,
      time: ctx.now.toISOString(),
      source: {
        run_id: ctx.run.id,
        definition: ctx.run.definition,
        version: ctx.run.version,
        node_id: node.id,
        iteration,
        attempt,
      },
      data: payload.value,
    };
    putTask(ctx, node.id, iteration, waiting, {
      status: 'completed',
      input: payload.value,
      output: { event_id: message.id },
      arrivals,
    });
    ctx.emit({
      kind: 'effect',
      effect: { kind: 'publish', sink: node.sink, topic: node.topic, message },
      task: at,
    });
    ctx.record('event.published', { sink: node.sink, topic: node.topic, event_id: message.id }, at);
    await ctx.flow.propagate(node.id, iteration, true);
  },
};
