import type { MappingSource } from '../expr/mapping.js';
import type { Json, JsonObject } from '../json.js';
import type { TaskGates } from './limit-types.js';

/**
 * Every node kind of a definition, as one tagged union on `kind`. Each kind is a readonly record, and
 * `parseDefinition` hands out deeply frozen definitions: nothing downstream can change a node. Expressions
 * are JSONata source text (or mappings of it); they are compiled once per definition version.
 */

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

/**
 * What undoes a completed task when its run fails for good (saga compensation): a task of another type,
 * run by a worker like any task, with an input computed from the run (the compensated node's own output
 * included) when compensation reaches it.
 */
export interface Compensation {
  readonly taskType: string;
  /** Mapping that computes the compensation's input; the compensated attempt's output when null. */
  readonly input: MappingSource | null;
  readonly retry: RetryPolicy;
  /** Longest one compensation attempt may run; null for no limit. */
  readonly timeoutMs: number | null;
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
  /**
   * Expression whose value splits the node's semaphores and rate limit by key (per customer, per tenant):
   * each key has the limit's permits or window to itself. Evaluated when the attempt is queued.
   */
  readonly limitKey?: string;
}

/** A node that does nothing: useful as an explicit join point or a placeholder. */
export interface NoopNode extends NodeCommon {
  readonly kind: 'noop';
}

/** A human node's deadline: after `afterMs` without an answer, the edges to `to` are taken instead. */
export interface HumanDeadline {
  readonly afterMs: number;
  /** Successors taken when the deadline passes (the others are skipped); empty: the run fails. */
  readonly to: readonly string[];
}

/**
 * A task for a person: it appears in the inbox of its namespace, someone claims it and completes it with
 * data that must match `form` (a JSON Schema). The data becomes the node's output.
 */
export interface HumanNode extends NodeCommon {
  readonly kind: 'human';
  readonly title: string;
  /** What the person is shown, computed like a task's input; by default the run input. */
  readonly input: MappingSource | null;
  readonly form: JsonObject | null;
  /** Who the task is meant for (people or groups): for routing and filtering, not access control. */
  readonly assignees: readonly string[];
  readonly deadline: HumanDeadline | null;
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

/** A sub-graph run by a loop (once per pass) or a map (once per item). */
export interface Body {
  readonly nodes: readonly NodeDef[];
  readonly edges: readonly EdgeDef[];
  /** Mapping that computes one pass's (or item's) output; by default the outputs of the body's last nodes. */
  readonly output: MappingSource | null;
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
  /** Mapping to an object of search attributes to set on the run (text, number or boolean values). */
  readonly attributes: MappingSource | null;
}

/** Ends the run at once, completed with an output or failed with a reason. */
export interface TerminateNode extends NodeCommon {
  readonly kind: 'terminate';
  readonly status: 'completed' | 'failed';
  readonly output: MappingSource | null;
  /** Expression giving the failure reason. */
  readonly reason: string | null;
}

/** Starts a child run and waits for it: completes, fails or times out with the child. */
export interface SubWorkflowNode extends NodeCommon {
  readonly kind: 'sub_workflow';
  /** The child's definition name, in the parent's namespace. */
  readonly definition: string;
  /** A pinned version; the latest at the time the child starts when null. */
  readonly version: number | null;
  /** Mapping that computes the child's input; the parent's input when null. */
  readonly input: MappingSource | null;
  /** Each retry starts a new child. One attempt unless the node says otherwise. */
  readonly retry: RetryPolicy;
  /** Longest one child may run before the attempt times out (and the child is cancelled). */
  readonly timeoutMs: number | null;
}

/** Starts a run and moves on at once (fire and forget); its output is `{ run_id }`. */
export interface StartWorkflowNode extends NodeCommon {
  readonly kind: 'start_workflow';
  readonly definition: string;
  readonly version: number | null;
  readonly input: MappingSource | null;
}

/** Publishes a message to a sink configured on the server; its output is `{ event_id }`. */
export interface EventNode extends NodeCommon {
  readonly kind: 'event';
  /** The sink's name in the server's configuration. */
  readonly sink: string;
  /** Overrides the sink's stream, subject or routing key; also the message type. */
  readonly topic: string | null;
  /** Mapping that computes the message data; the run input when null. */
  readonly payload: MappingSource | null;
}

/** HTTP methods an `http` node may use. */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;

/** An HTTP method. */
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** A status code, or a class of them such as `2xx`. */
export type StatusMatch = number | `${1 | 2 | 3 | 4 | 5}xx`;

/**
 * Calls a URL from the server (a system task with the same leases as any task); output is the response.
 * Like a task node it may take semaphore permits and count against a rate limit while it runs.
 */
export interface HttpNode extends NodeCommon, TaskGates {
  readonly kind: 'http';
  /** Expression for the URL. */
  readonly url: string;
  readonly method: HttpMethod;
  /** Mapping for request headers. */
  readonly headers: MappingSource | null;
  /** Mapping for a JSON request body. */
  readonly body: MappingSource | null;
  /** Longest one request may take. */
  readonly timeoutMs: number;
  /** Status codes that count as success (default `2xx`). */
  readonly success: readonly StatusMatch[];
  readonly retry: RetryPolicy;
  readonly priority: number;
}

/** Control-flow nodes: branches, waits, loops, fan-out, transforms and ends, run by the engine itself. */
export type ControlFlowNode =
  | SwitchNode
  | WaitNode
  | WaitForEventNode
  | LoopNode
  | MapNode
  | TransformNode
  | TerminateNode;

/** The nodes whose work reaches outside the run: other runs, message sinks and HTTP services. */
export type EffectNode = SubWorkflowNode | StartWorkflowNode | EventNode | HttpNode;

/** Node kinds that hold a body sub-graph. */
export type ContainerNode = LoopNode | MapNode;

/** Every kind of node. */
export type NodeDef = TaskNode | NoopNode | HumanNode | ControlFlowNode | EffectNode;

/** The kinds of node, as written in YAML. */
export type NodeKind = NodeDef['kind'];

/** The node of one kind. */
export type NodeOfKind<K extends NodeKind> = Extract<NodeDef, { kind: K }>;

/** When an edge out of a switch or a wait_for_event is taken. */
export type EdgeWhen =
  /** Taken when the switch value equals one of `values`. */
  | { readonly kind: 'case'; readonly values: readonly Json[] }
  /** Taken when the switch value matches no case. */
  | { readonly kind: 'default' }
  /** Taken when a wait_for_event node's timeout passes before its signal arrives. */
  | { readonly kind: 'timeout' };

/** A directed edge: `to` starts once `from` is done (and, for joins, once its other branches are). */
export interface EdgeDef {
  readonly from: string;
  readonly to: string;
  readonly line: number;
  /** For edges out of a switch or a wait_for_event: when the edge is taken. Absent: always. */
  readonly when?: EdgeWhen;
}
