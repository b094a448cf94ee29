import type { NodeDef, NodeKind, NodeOfKind } from '../../definition/node-types.js';
import { eventNode } from './event.js';
import { httpNode } from './http.js';
import { humanNode } from './human.js';
import { loopNode } from './loop.js';
import { mapNode } from './map.js';
import type { NodeHandler } from './node-handler.js';
import { noopNode } from './noop.js';
import { startWorkflowNode } from './start-workflow.js';
import { subWorkflowNode } from './sub-workflow.js';
import { switchNode } from './switch.js';
import { taskNode } from './task.js';
import { terminateNode } from './terminate.js';
import { transformNode } from './transform.js';
import { waitNode } from './wait.js';
import { waitForEventNode } from './wait-for-event.js';

/** Every node kind's handler, by kind: a kind missing here does not compile. */
const NODE_HANDLERS: { readonly [K in NodeKind]: NodeHandler<NodeOfKind<K>> } = {
  task: taskNode,
  noop: noopNode,
  human: humanNode,
  switch: switchNode,
  wait: waitNode,
  wait_for_event: waitForEventNode,
  loop: loopNode,
  map: mapNode,
  transform: transformNode,
  terminate: terminateNode,
  sub_workflow: subWorkflowNode,
  start_workflow: startWorkflowNode,
  event: eventNode,
  http: httpNode,
};

/** The handler of a node's kind. */
export function handlerOf<N extends NodeDef>(node: N): NodeHandler<N> {
  return NODE_HANDLERS[node.kind] as unknown as NodeHandler<N>;
}
