import type { MappingSource } from '../expr/mapping.js';
import type { Json } from '../json.js';
import type { EdgeDef, NodeCommon, NodeDef } from './types.js';

/**
 * The node kinds the engine runs itself, without a worker: branches, waits, loops, fan-out, transforms
 * and terminations. Expressions are JSONata source text; they are compiled once per definition version.
 */

/** When an edge out of a switch or a wait_for_event is taken. */
export type EdgeWhen =
  /** Taken when the switch value equals one of `values`. */
  | { readonly kind: 'case'; readonly values: readonly Json[] }
  /** Taken when the switch value matches no case. */
  | { readonly kind: 'default' }
  /** Taken when a wait_for_event node's timeout passes before its signal arrives. */
  | { readonly kind: 'timeout' };

/** A sub-graph run by a loop (once per pass) or a map (once per item). */
export interface Body {
  readonly nodes: readonly NodeDef[];
  readonly edges: readonly EdgeDef[];
  /** Mapping that computes one pass's (or item's) output; by default the outputs of the body's last nodes. */
  readonly output: MappingSource | null;
}

/** Chooses among its labelled outgoing edges by the value of an expression. */
export interface SwitchNode extends NodeCommon {
  readonly kind: 'switch';
  readonly expression: string;
}

/** Waits for a duration, or until a timestamp computed when the node is reached. */
export interface WaitNode extends NodeCommon {
  readonly kind: 'wait';
  readonly durationMs: number | null;
  /** Expression giving an ISO 8601 timestamp or milliseconds since 1970. */
  readonly until: string | null;
}

/** Waits for a named signal sent to the run, optionally only one with a matching correlation key. */
export interface WaitForEventNode extends NodeCommon {
  readonly kind: 'wait_for_event';
  readonly event: string;
  /** Expression giving the correlation key (text or a number) a signal must carry to be taken. */
  readonly correlation: string | null;
  /** Longest wait; then the `on: timeout` edges are taken, or the node fails when it has none. */
  readonly timeoutMs: number | null;
}

/** Runs its body again and again: once, then again while `while` holds, at most `maxIterations` times. */
export interface LoopNode extends NodeCommon {
  readonly kind: 'loop';
  readonly while: string;
  readonly maxIterations: number;
  readonly body: Body;
}

/** Runs its body once per item of a list computed when the node is reached. */
export interface MapNode extends NodeCommon {
  readonly kind: 'map';
  readonly items: string;
  /** Most items in progress at once; null for all of them. */
  readonly concurrency: number | null;
  readonly body: Body;
}

/** Computes a value (its output) with a mapping, and optionally sets run variables. */
export interface TransformNode extends NodeCommon {
  readonly kind: 'transform';
  readonly value: MappingSource;
  /** Mapping to an object whose fields are set as run variables. */
  readonly vars: MappingSource | null;
}

/** Ends the run at once, completed with an output or failed with a reason. */
export interface TerminateNode extends NodeCommon {
  readonly kind: 'terminate';
  readonly status: 'completed' | 'failed';
  readonly output: MappingSource | null;
  /** Expression giving the failure reason. */
  readonly reason: string | null;
}

/** Every node kind the engine runs without a worker (besides noop). */
export type ControlNode =
  | SwitchNode
  | WaitNode
  | WaitForEventNode
  | LoopNode
  | MapNode
  | TransformNode
  | TerminateNode;

/** Node kinds that hold a body sub-graph. */
export type ContainerNode = LoopNode | MapNode;

/** True for a loop or a map. */
export function isContainer(node: NodeDef): node is ContainerNode {
  return node.kind === 'loop' || node.kind === 'map';
}

/** Every node of a definition, bodies included, with the container each one belongs to (null at the top). */
export function allNodes(
  nodes: readonly NodeDef[],
  parent: string | null = null,
): { node: NodeDef; parent: string | null }[] {
  const out: { node: NodeDef; parent: string | null }[] = [];
  for (const node of nodes) {
    out.push({ node, parent });
    if (isContainer(node)) out.push(...allNodes(node.body.nodes, node.id));
  }
  return out;
}
