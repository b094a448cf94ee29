import type { StartWorkflowNode, SubWorkflowNode } from '../../definition/node-types.js';
import type { Json } from '../../json.js';
import type { DecisionContext } from '../context.js';

/**
 * Asks for a run to start (through the outbox), after the attempt it belongs to was written: a child that
 * reports back (`detached` false), or a run started and left (`detached` true). `runId` is computed from
 * the attempt's identity, so a retried node gets a new run and a redelivered start gets the same one.
 */
export function emitStart(
  ctx: DecisionContext,
  node: SubWorkflowNode | StartWorkflowNode,
  at: { readonly iteration: string; readonly attempt: number },
  input: Json,
  runId: string,
  detached: boolean,
): void {
  const task = { nodeId: node.id, iteration: at.iteration, attempt: at.attempt };
  ctx.emit({
    kind: 'effect',
    effect: {
      kind: 'start_run',
      runId,
      definition: node.definition,
      version: node.version,
      input,
      parent: { runId: ctx.run.id, ...task },
      detached,
    },
    task,
  });
  ctx.record(
    detached ? 'workflow.started' : 'child.requested',
    { run_id: runId, definition: node.definition, version: node.version },
    task,
  );
}
