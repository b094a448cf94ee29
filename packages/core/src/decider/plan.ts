import { SAGA_LOG_NODE } from '../definition/compensation.js';
import type { Workflow } from '../definition/workflow.js';
import type { RunEvent } from './events.js';
import { parentIteration, refIteration } from './iterations.js';
import type { RunView } from './state.js';

/** A node instance to load: node id and iteration. */
export interface StateKey {
  readonly nodeId: string;
  readonly iteration: string;
}

/**
 * The node instances a decision on `event` will most likely read, so the shell can load them in one
 * query before deciding. It is a guess, not a contract: anything missed is asked for by `decide`.
 */
export function planLoad(workflow: Workflow, run: RunView, event: RunEvent): StateKey[] {
  const keys = new Map<string, StateKey>();
  const add = (nodeId: string, iteration: string) =>
    keys.set(`${nodeId}\u0000${iteration}`, { nodeId, iteration });
  const { graph } = workflow;
  const around = (nodeId: string, iteration: string) => {
    add(nodeId, iteration);
    for (const next of graph.successors.get(nodeId) ?? []) {
      add(next, iteration);
      for (const ref of workflow.inputMapping(next)?.refs ?? [])
        add(ref, refIteration(graph, ref, iteration));
    }
    // A last node of a loop or map body reports to its pass (or item) row and the container's own row.
    const container = graph.parent.get(nodeId) ?? null;
    if (container !== null && (graph.successors.get(nodeId) ?? []).length === 0) {
      add(container, iteration);
      add(container, parentIteration(iteration));
    }
    const nearEnd = run.sinksDone + 1 >= graph.sinks.length;
    const reachesSink =
      graph.sinks.includes(nodeId) ||
      (graph.successors.get(nodeId) ?? []).some((n) => graph.sinks.includes(n));
    if (nearEnd && reachesSink) {
      for (const sink of graph.sinks) add(sink, '');
      for (const ref of workflow.outputMapping?.refs ?? []) add(ref, '');
    }
  };
  // The saga log is read by completions and failures of runs with compensations.
  if (workflow.compensable && event.kind !== 'run_started') add(SAGA_LOG_NODE, '');
  switch (event.kind) {
    case 'compensation_due':
      break;
    case 'run_started':
      for (const id of graph.entries) {
        add(id, '');
        for (const ref of workflow.inputMapping(id)?.refs ?? []) add(ref, '');
      }
      break;
    case 'node_completed':
    case 'child_finished':
      around(event.nodeId, event.iteration);
      break;
    case 'node_failed':
    case 'report_refused':
      add(event.nodeId, event.iteration);
      break;
    case 'timer_fired':
      if (event.purpose.kind === 'retry') add(event.purpose.nodeId, event.purpose.iteration);
      else around(event.purpose.nodeId, event.purpose.iteration);
      break;
    case 'signal_received':
      // Top-level nodes waiting for this signal, and what follows them; deeper ones are asked for.
      for (const [id, node] of graph.nodes) {
        if (node.kind === 'wait_for_event' && node.event === event.name && graph.parent.get(id) === null)
          around(id, '');
      }
      break;
    case 'task_overridden':
    case 'node_skipped':
      around(event.nodeId, event.iteration);
      break;
    case 'run_cancelled':
    case 'run_paused':
    case 'run_terminated':
      break;
    case 'run_resumed':
    case 'run_retried':
    case 'run_rerun':
      break; // the whole run is loaded (needsWholeRun)
    case 'run_swept':
      for (const id of graph.nodes.keys()) add(id, '');
      break;
  }
  return [...keys.values()];
}
