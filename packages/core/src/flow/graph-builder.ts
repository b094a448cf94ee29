import type { Json } from '../json.js';
import {
  type After,
  type Duration,
  durationText,
  type Mapping,
  type NodeOptions,
  type RetryOptions,
  retryFields,
} from './options.js';
import type { StepDef } from './step.js';

/** What a task node runs and how (the step's own defaults apply where these are not given). */
export interface TaskOptions<S extends StepDef = StepDef> extends NodeOptions {
  /** Mapping that computes the task's input; the run input (the item, inside a map) when absent. */
  readonly input?: Mapping;
  readonly retry?: RetryOptions;
  /** Longest one attempt may run. */
  readonly timeout?: Duration;
  readonly priority?: number;
  /** Semaphores the task takes while it runs, and permits of each. */
  readonly semaphores?: readonly string[] | { readonly [name: string]: number };
  readonly rateLimit?: string;
  /** What undoes this task if the run later fails for good (saga compensation). */
  readonly compensate?: CompensateOptions;
  /** Never set: carries the step type. */
  readonly __step?: S;
}

/** A compensation: the step that undoes a task, and its input (the task's output when absent). */
export interface CompensateOptions {
  readonly step: StepDef;
  readonly input?: Mapping;
  readonly retry?: RetryOptions;
  readonly timeout?: Duration;
}

/** A YAML-shaped document (what the builder writes and `toYaml` prints). */
export type Doc = { [key: string]: Json };

/**
 * Collects nodes and edges in the YAML format's own shape, for a workflow or for the body of a map.
 * Nothing is checked here: the definition parser checks the result, so a code-first workflow gets every
 * problem a YAML one would, in the same words.
 */
export class GraphBuilder {
  protected readonly nodes: Doc[] = [];
  protected readonly edges: Doc[] = [];

  /** A task node that runs `step`. */
  task<S extends StepDef>(id: string, step: S, options: TaskOptions<S> = {}): this {
    const node: Doc = { id, task_type: step.taskType };
    if (options.input !== undefined) node.input = options.input;
    const retry = { ...step.retry, ...options.retry };
    if (Object.keys(retry).length > 0) node.retry = retryFields(retry);
    const timeout = options.timeout ?? step.timeout;
    if (timeout !== undefined) node.timeout = durationText(timeout);
    if (options.priority !== undefined) node.priority = options.priority;
    if (options.semaphores !== undefined)
      node.semaphores = Array.isArray(options.semaphores)
        ? [...(options.semaphores as readonly string[])]
        : { ...(options.semaphores as { [name: string]: number }) };
    if (options.rateLimit !== undefined) node.rate_limit = options.rateLimit;
    if (options.compensate) node.compensate = compensateFields(options.compensate);
    return this.add(node, options);
  }

  /** A node that does nothing: a join point or a placeholder. */
  noop(id: string, options: NodeOptions = {}): this {
    return this.add({ id, kind: 'noop' }, options);
  }

  /** Waits for a duration, or until the time an expression gives. */
  wait(
    id: string,
    options: NodeOptions & ({ readonly duration: Duration } | { readonly until: string }),
  ): this {
    const node: Doc = { id, kind: 'wait' };
    if ('duration' in options) node.duration = durationText(options.duration);
    if ('until' in options) node.until = options.until;
    return this.add(node, options);
  }

  /**
   * Waits for a signal sent to the run (`engine.signal`, `weft signal`), optionally one whose correlation
   * key matches an expression, at most `timeout`; edges `{ from: id, on: 'timeout' }` are taken then.
   */
  waitForEvent(
    id: string,
    options: NodeOptions & {
      readonly event: string;
      readonly correlation?: string;
      readonly timeout?: Duration;
    },
  ): this {
    const node: Doc = { id, kind: 'wait_for_event', event: options.event };
    if (options.correlation !== undefined) node.correlation = options.correlation;
    if (options.timeout !== undefined) node.timeout = durationText(options.timeout);
    return this.add(node, options);
  }

  /** Chooses among its outgoing edges (`{ from: id, case: ... }`, `{ from: id, default: true }`). */
  switch(id: string, options: NodeOptions & { readonly expression: string }): this {
    return this.add({ id, kind: 'switch', expression: options.expression }, options);
  }

  /** Computes a value with a mapping, and optionally sets run variables. */
  transform(
    id: string,
    options: NodeOptions & {
      readonly value: Mapping;
      readonly vars?: Mapping;
      readonly attributes?: Mapping;
    },
  ): this {
    const node: Doc = { id, kind: 'transform', value: options.value };
    if (options.vars !== undefined) node.vars = options.vars;
    if (options.attributes !== undefined) node.attributes = options.attributes;
    return this.add(node, options);
  }

  /**
   * Runs a body once per item of a list (dynamic fan-out). The body is a sub-graph built by `body`; its
   * nodes read the item as `item` (and a task without an input gets the item).
   */
  map(
    id: string,
    options: NodeOptions & {
      readonly items: string;
      readonly concurrency?: number;
      readonly body: (body: BodyBuilder) => BodyBuilder | undefined;
    },
  ): this {
    const body = new BodyBuilder();
    options.body(body);
    const node: Doc = { id, kind: 'map', items: options.items };
    if (options.concurrency !== undefined) node.concurrency = options.concurrency;
    node.body = body.document();
    return this.add(node, options);
  }

  /** Starts a child run of another workflow and waits for its outcome. */
  subWorkflow(
    id: string,
    options: NodeOptions & {
      /** The child workflow: its name, or the code-first workflow itself. */
      readonly workflow: string | { readonly name: string };
      readonly version?: number;
      readonly input?: Mapping;
      readonly retry?: RetryOptions;
      readonly timeout?: Duration;
    },
  ): this {
    const definition = typeof options.workflow === 'string' ? options.workflow : options.workflow.name;
    const node: Doc = { id, kind: 'sub_workflow', definition };
    if (options.version !== undefined) node.version = options.version;
    if (options.input !== undefined) node.input = options.input;
    if (options.retry) node.retry = retryFields(options.retry);
    if (options.timeout !== undefined) node.timeout = durationText(options.timeout);
    return this.add(node, options);
  }

  /** Runs a body once, then again while `while` holds, at most `maxIterations` times. */
  loop(
    id: string,
    options: NodeOptions & {
      readonly while: string;
      readonly maxIterations: number;
      readonly body: (body: BodyBuilder) => BodyBuilder | undefined;
    },
  ): this {
    const body = new BodyBuilder();
    options.body(body);
    const node: Doc = { id, kind: 'loop', while: options.while, max_iterations: options.maxIterations };
    node.body = body.document();
    return this.add(node, options);
  }

  /** Ends the run at once: completed with an output, or failed with a reason (an expression). */
  terminate(
    id: string,
    options: NodeOptions &
      (
        | { readonly status: 'completed'; readonly output?: Mapping }
        | { readonly status: 'failed'; readonly reason?: string }
      ),
  ): this {
    const node: Doc = { id, kind: 'terminate', status: options.status };
    if ('output' in options && options.output !== undefined) node.output = options.output;
    if ('reason' in options && options.reason !== undefined) node.reason = options.reason;
    return this.add(node, options);
  }

  /** Starts a run of another workflow and goes on at once (its output is `{ run_id }`). */
  startWorkflow(
    id: string,
    options: NodeOptions & {
      readonly workflow: string | { readonly name: string };
      readonly version?: number;
      readonly input?: Mapping;
    },
  ): this {
    const definition = typeof options.workflow === 'string' ? options.workflow : options.workflow.name;
    const node: Doc = { id, kind: 'start_workflow', definition };
    if (options.version !== undefined) node.version = options.version;
    if (options.input !== undefined) node.input = options.input;
    return this.add(node, options);
  }

  /** Publishes a message to a sink configured on the server (its output is `{ event_id }`). */
  event(
    id: string,
    options: NodeOptions & { readonly sink: string; readonly topic?: string; readonly payload?: Mapping },
  ): this {
    const node: Doc = { id, kind: 'event', sink: options.sink };
    if (options.topic !== undefined) node.topic = options.topic;
    if (options.payload !== undefined) node.payload = options.payload;
    return this.add(node, options);
  }

  /** Calls a URL from the engine (a system task); its output is the response. */
  http(
    id: string,
    options: NodeOptions & {
      /** Expression for the URL. */
      readonly url: string;
      readonly method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';
      readonly headers?: Mapping;
      readonly body?: Mapping;
      readonly timeout?: Duration;
      /** Status codes that count as success, such as `[200, '3xx']` (default `2xx`). */
      readonly success?: readonly (number | string)[];
      readonly retry?: RetryOptions;
    },
  ): this {
    const node: Doc = { id, kind: 'http', url: options.url };
    if (options.method !== undefined) node.method = options.method;
    if (options.headers !== undefined) node.headers = options.headers;
    if (options.body !== undefined) node.body = options.body;
    if (options.timeout !== undefined) node.timeout = durationText(options.timeout);
    if (options.success !== undefined) node.success = [...options.success];
    if (options.retry) node.retry = retryFields(options.retry);
    return this.add(node, options);
  }

  /** Adds an edge from `from` to `to` (the same as `after` on `to`). */
  edge(from: string, to: string): this {
    this.edges.push({ from, to });
    return this;
  }

  private add(node: Doc, options: NodeOptions): this {
    if (options.description !== undefined) node.description = options.description;
    if (options.join !== undefined) node.join = options.join;
    this.nodes.push(node);
    for (const after of options.after ?? []) this.edges.push(edgeFields(after, String(node.id)));
    return this;
  }
}

/** The body of a loop or a map: nodes, edges and an optional output mapping per pass or item. */
export class BodyBuilder extends GraphBuilder {
  private out: Mapping | undefined;

  /** Mapping that computes one item's output; by default the outputs of the body's last nodes. */
  output(mapping: Mapping): this {
    this.out = mapping;
    return this;
  }

  /** The body as YAML fields. */
  document(): Doc {
    return {
      nodes: [...this.nodes],
      ...(this.edges.length > 0 ? { edges: [...this.edges] } : {}),
      ...(this.out !== undefined ? { output: this.out } : {}),
    };
  }
}

function edgeFields(after: After, to: string): Doc {
  if (typeof after === 'string') return { from: after, to };
  if ('case' in after)
    return { from: after.from, to, case: Array.isArray(after.case) ? [...after.case] : (after.case as Json) };
  if ('default' in after) return { from: after.from, to, default: true };
  return { from: after.from, to, on: after.on };
}

function compensateFields(c: CompensateOptions): Doc {
  const out: Doc = { task_type: c.step.taskType };
  if (c.input !== undefined) out.input = c.input;
  const retry = { ...c.step.retry, ...c.retry };
  if (Object.keys(retry).length > 0) out.retry = retryFields(retry);
  const timeout = c.timeout ?? c.step.timeout;
  if (timeout !== undefined) out.timeout = durationText(timeout);
  return out;
}
