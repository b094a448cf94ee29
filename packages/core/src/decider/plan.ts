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
  const plan = new LoadPlan(workflow, run);
  // The saga log is read by completions and failures of runs with compensations.
  if (workflow.compensable && event.kind !== 'run_started') plan.add(SAGA_LOG_NODE, '');
  const { graph } = workflow;
  switch (event.kind) {
    case 'run_started':
      for (const id of graph.entries) {
        plan.add(id, '');
        for (const ref of workflow.inputMapping(id)?.refs ?? []) plan.add(ref, '');
      }
      break;
    case 'node_completed':
    case 'child_finished':
    case 'task_overridden':
    case 'node_skipped':
      plan.around(event.nodeId, event.iteration);
      break;
    case 'node_failed':
    case 'report_refused':
      plan.add(event.nodeId, event.iteration);
      break;
    case 'timer_fired':
      if (event.purpose.kind === 'retry') plan.add(event.purpose.nodeId, event.purpose.iteration);
      else plan.around(event.purpose.nodeId, event.purpose.iteration);
      break;
    case 'signal_received':
      // Top-level nodes waiting for this signal, and what follows them; deeper ones are asked for.
      for (const [id, node] of graph.nodes) {
        if (node.kind === 'wait_for_event' && node.event === event.name && graph.parent.get(id) === null)
          plan.around(id, '');
      }
      break;
    case 'run_swept':
    case 'run_forked':
      for (const id of graph.nodes.keys()) plan.add(id, '');
      break;
    // Nothing more: the whole run is loaded for resume, retry and rerun (needsWholeRun); the others read
    // only the run (cancel, pause, terminate) or the saga log (compensation_due).
    case 'compensation_due':
    case 'run_cancelled':
    case 'run_paused':
    case 'run_terminated':
    case 'run_resumed':
    case 'run_retried':
    case 'run_rerun':
    case 'run_migrated':
      break;
  }
  return plan.keys();
}

/** The instances a plan collects, each once. */
class LoadPlan {
  private readonly planned = new Map<string, StateKey>();

  constructor(
    private readonly workflow: Workflow,
    private readonly run: RunView,
  ) {}

  add(nodeId: string, iteration: string): void {
    this.planned.set(`${nodeId}\u0000${iteration}`, { nodeId, iteration });
  }

  /** A node instance, its successors and what their input mappings read, and what finishing may read. */
  around(nodeId: string, iteration: string): void {
    const { graph } = this.workflow;
    this.add(nodeId, iteration);
    for (const next of graph.successors.get(nodeId) ?? []) {
      this.add(next, iteration);
      for (const ref of this.workflow.inputMapping(next)?.refs ?? [])
        this.add(ref, refIteration(graph, ref, iteration));
    }
    // A last node of a loop or map body reports to its pass (or item) row and the container's own row.
    const container = graph.parent.get(nodeId) ?? null;
    if (container !== null && (graph.successors.get(nodeId) ?? []).length === 0) {
      this.add(container, iteration);
      this.add(container, parentIteration(iteration));
    }
    const nearEnd = this.run.sinksDone + 1 >= graph.sinks.length;
    const reachesSink =
      graph.sinks.includes(nodeId) ||
      (graph.successors.get(nodeId) ?? []).some((n) => graph.sinks.includes(n));
    if (nearEnd && reachesSink) {
      for (const sink of graph.sinks) this.add(sink, '');
      for (const ref of this.workflow.outputMapping?.refs ?? []) this.add(ref, '');
    }
  }

  keys(): StateKey[] {
    return [...this.planned.values()];
  }
}
