import type { MappingSource } from '../expr/mapping.js';
import type { JsonObject } from '../json.js';
import type { Compensation } from './compensation.js';
import type { ControlNode, EdgeWhen } from './control-types.js';
import type { EventNode, HttpNode, StartWorkflowNode, SubWorkflowNode } from './effect-nodes.js';
import type { HumanNode } from './human-types.js';
import type { DeclaredLimits, TaskGates } from './limit-types.js';

export type { EventNode, HttpNode, StartWorkflowNode, SubWorkflowNode } from './effect-nodes.js';

/** How a node with several incoming edges waits: for every branch that can still arrive, or the first. */
export type JoinMode = 'all' | 'any';

/** When and how often a failed task attempt is tried again. */
export interface RetryPolicy {
  /** Attempts in all, the first included: 1 means never retry. */
  readonly maxAttempts: number;
  readonly backoff: 'fixed' | 'exponential';
  /** Wait before the second attempt. */
  readonly delayMs: number;
  /** Cap on the wait between attempts. */
  readonly maxDelayMs: number;
  /** Growth per attempt for exponential backoff. */
  readonly factor: number;
}

/** Fields every node has. `line` is where the node starts in the YAML source (1-based, 0 if built in code). */
export interface NodeCommon {
  readonly id: string;
  readonly line: number;
  readonly join: JoinMode;
  readonly description?: string;
}

/** A unit of work done by an external worker that polls for its `taskType`. */
export interface TaskNode extends NodeCommon, TaskGates {
  readonly kind: 'task';
  readonly taskType: string;
  readonly input: MappingSource | null;
  readonly retry: RetryPolicy;
  /** Longest one attempt may run; null for no limit (the lease still guards against dead workers). */
  readonly timeoutMs: number | null;
  /** Higher runs first among queued tasks of one task type. */
  readonly priority: number;
  /** What undoes this task once it completed, if the run later fails for good (saga compensation). */
  readonly compensate?: Compensation;
}

/** A node that does nothing: useful as an explicit join point or a placeholder. */
export interface NoopNode extends NodeCommon {
  readonly kind: 'noop';
}

/**
 * Every kind of node. The control and wait kinds are in control-types.ts, human in human-types.ts, the
 * effect kinds in effect-nodes.ts.
 */
export type NodeDef =
  | TaskNode
  | NoopNode
  | ControlNode
  | HumanNode
  | SubWorkflowNode
  | StartWorkflowNode
  | EventNode
  | HttpNode;

/** The kinds of node, as written in YAML. */
export type NodeKind = NodeDef['kind'];

/** A directed edge: `to` starts once `from` is done (and, for joins, once its other branches are). */
export interface EdgeDef {
  readonly from: string;
  readonly to: string;
  readonly line: number;
  /** For edges out of a switch or a wait_for_event: when the edge is taken. Absent: always. */
  readonly when?: EdgeWhen;
}

/** A workflow definition: the validated, normalised form of one YAML document. */
export interface Definition {
  readonly name: string;
  readonly description?: string;
  readonly nodes: readonly NodeDef[];
  readonly edges: readonly EdgeDef[];
  /** JSON Schema the run input must satisfy, checked at start. */
  readonly inputSchema: JsonObject | null;
  /** Mapping that computes the run's output; by default the outputs of the last nodes, keyed by id. */
  readonly output: MappingSource | null;
  /** Limits this definition declares for its namespace (set when it is deployed). */
  readonly limits?: DeclaredLimits;
  /** Where to announce the run's end (completed, failed, cancelled), through the outbox. */
  readonly onStatus?: StatusCallback | null;
}

/** A run status a status callback can announce. */
export type CallbackStatus = 'completed' | 'failed' | 'cancelled' | 'terminated';

/** A definition's status callback: a webhook URL, or a sink configured on the server. */
export type StatusCallback =
  | { readonly kind: 'url'; readonly url: string; readonly statuses: readonly CallbackStatus[] }
  | { readonly kind: 'sink'; readonly sink: string; readonly statuses: readonly CallbackStatus[] };

/** The retry policy a task gets when it names none. */
export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 3,
  backoff: 'exponential',
  delayMs: 1000,
  maxDelayMs: 300_000,
  factor: 2,
};
