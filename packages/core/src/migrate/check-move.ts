import type { RunStatus, TaskState, TaskStatus } from '../decider/state.js';
import { isContainer } from '../definition/containers.js';
import type { Graph } from '../definition/graph.js';
import type { NodeDef } from '../definition/node-types.js';
import type { Workflow } from '../definition/workflow.js';
import { isBookkeepingNode, movedId, type NodeMap } from './node-map.js';

/** A move of runs from one version of a definition to another. */
export interface RunMove {
  readonly from: Workflow;
  readonly to: Workflow;
  readonly toVersion: number;
  readonly nodeMap: NodeMap;
}

/** Run statuses a run can move from: it is still going, and nothing has started to undo it. */
export const MOVABLE_RUN_STATUSES: readonly RunStatus[] = ['running', 'paused'];

const OPEN: ReadonlySet<TaskStatus> = new Set(['waiting', 'queued', 'running']);
/** Attempts that passed control on: what follows them was decided by the old graph. */
const PASSED_ON: ReadonlySet<TaskStatus> = new Set(['completed', 'skipped']);

/**
 * Why a run cannot move to the new version, one sentence each; empty when it can. `tasks` is the latest
 * attempt of each node instance of the run. A run can move when every node it has reached exists in the new
 * version (under its own id or the node map's) as the same kind of node in the same place, with the same
 * edges into it; every node that passed control on still leads where it led; an open task keeps its task type;
 * and the new version adds no entry node (one would never start). Completed outputs are kept as they are.
 */
export function moveRefusals(move: RunMove, status: RunStatus, tasks: readonly TaskState[]): string[] {
  if (!MOVABLE_RUN_STATUSES.includes(status))
    return [`the run is ${status}: only running or paused runs move to another version`];
  const reasons: string[] = [];
  const byNode = new Map<string, TaskStatus[]>();
  let sagaLog = false;
  for (const t of tasks) {
    if (isBookkeepingNode(t.nodeId)) {
      sagaLog = true;
      continue;
    }
    const list = byNode.get(t.nodeId) ?? [];
    list.push(t.status);
    byNode.set(t.nodeId, list);
  }
  if (sagaLog && Object.keys(move.nodeMap).length > 0)
    reasons.push('the run keeps a saga log of compensable steps: it moves only without renaming nodes');
  for (const [nodeId, statuses] of byNode) reasons.push(...nodeRefusals(move, nodeId, statuses));
  const reached = new Set([...byNode.keys()].map((id) => movedId(move.nodeMap, id)));
  for (const entry of move.to.graph.entries)
    if (!reached.has(entry))
      reasons.push(
        `version ${move.toVersion} has entry node "${entry}", which only starts when a run starts: this run would never run it`,
      );
  return reasons;
}

/** Why one node the run has reached stops the move. */
function nodeRefusals(move: RunMove, nodeId: string, statuses: readonly TaskStatus[]): string[] {
  const { from, to, nodeMap, toVersion } = move;
  const newId = movedId(nodeMap, nodeId);
  const was = from.graph.nodes.get(nodeId);
  const now = to.graph.nodes.get(newId);
  const label = statuses.join(', ');
  if (!was) return [`node "${nodeId}" is not in the run's own version: the run cannot be read by it`];
  if (!now)
    return [
      `node "${nodeId}" has run (${label}) and version ${toVersion} has no node "${newId}": map it to one of its nodes (nodeMap)`,
    ];
  const named = newId === nodeId ? `"${nodeId}"` : `"${nodeId}" (now "${newId}")`;
  if (was.kind !== now.kind)
    return [`node ${named} is a ${was.kind} node, and a ${now.kind} in version ${toVersion}`];
  const reasons: string[] = [];
  const open = statuses.some((s) => OPEN.has(s));
  const parentWas = from.graph.parent.get(nodeId) ?? null;
  const parentNow = to.graph.parent.get(newId) ?? null;
  if ((parentWas === null ? null : movedId(nodeMap, parentWas)) !== parentNow)
    reasons.push(`node ${named} is in another loop or map body in version ${toVersion}`);
  if (open && was.kind === 'task' && now.kind === 'task' && was.taskType !== now.taskType)
    reasons.push(
      `node ${named} is ${label} as task type "${was.taskType}", which version ${toVersion} changes to "${now.taskType}"`,
    );
  // A renamed node's attempts, arrivals, timers, inbox events and human tasks are renamed; what other kinds
  // keep while they wait (signal mailboxes, child runs) is not.
  if (newId !== nodeId && was.kind !== 'task' && !statuses.every((s) => PASSED_ON.has(s)))
    reasons.push(
      `node "${nodeId}" is ${label}: only a task node, or a node that has finished, can be renamed; move the run once it is done, or keep its id`,
    );
  const into = differs(from.graph.predecessors, to.graph.predecessors, nodeId, newId, nodeMap);
  if (into)
    reasons.push(`node ${named} has started, and version ${toVersion} changes the edges into it (${into})`);
  if (statuses.some((s) => PASSED_ON.has(s))) {
    const out = differs(from.graph.successors, to.graph.successors, nodeId, newId, nodeMap);
    if (out)
      reasons.push(
        `node ${named} has finished, and version ${toVersion} changes where it leads (${out}): nodes it would now lead to would never start`,
      );
    if (was.kind === 'task' && now.kind === 'task' && was.compensate && !now.compensate)
      reasons.push(`node ${named} completed with a compensation, which version ${toVersion} removes`);
  }
  if (open && isContainer(was)) {
    const body = bodyChange(was, now, nodeMap);
    if (body)
      reasons.push(
        `${was.kind} ${named} is in progress, and version ${toVersion} changes its body (${body})`,
      );
  }
  return reasons;
}

/** How a node's neighbours (by `edges`) differ between versions, as `from a, b to a, c`; null when not. */
function differs(
  before: Graph['successors'],
  after: Graph['successors'],
  oldId: string,
  newId: string,
  nodeMap: NodeMap,
): string | null {
  const was = (before.get(oldId) ?? []).map((id) => movedId(nodeMap, id)).sort();
  const now = [...(after.get(newId) ?? [])].sort();
  if (was.length === now.length && was.every((id, i) => id === now[i])) return null;
  const list = (ids: readonly string[]) => (ids.length === 0 ? 'none' : ids.join(', '));
  return `from ${list(was)} to ${list(now)}`;
}

/** How a loop's or map's body nodes differ between versions; null when they are the same nodes. */
function bodyChange(was: NodeDef, now: NodeDef, nodeMap: NodeMap): string | null {
  if (!isContainer(was) || !isContainer(now)) return null;
  const before = was.body.nodes.map((n) => movedId(nodeMap, n.id)).sort();
  const after = now.body.nodes.map((n) => n.id).sort();
  if (before.length === after.length && before.every((id, i) => id === after[i])) return null;
  return `nodes ${before.join(', ')} become ${after.join(', ')}`;
}
