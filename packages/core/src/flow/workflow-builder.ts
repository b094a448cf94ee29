import { parseDefinition } from '../definition/parse.js';
import { type DefinitionProblem, formatProblem } from '../definition/problems.js';
import type { Definition } from '../definition/types.js';
import { WeftError } from '../errors.js';
import type { Json, JsonObject } from '../json.js';
import { err, ok, type Result } from '../result.js';
import { type Doc, GraphBuilder } from './graph-builder.js';
import { type Duration, durationText, type Mapping, type RetryOptions, retryFields } from './options.js';
import { toYaml } from './to-yaml.js';

/**
 * A workflow defined in code, built: its definition (the same graph the YAML format gives, checked by the
 * same parser) and that YAML, which is what gets deployed. `I` and `O` type its runs' input and output.
 */
export interface CodeWorkflow<I extends Json = Json, O extends Json = Json> {
  readonly kind: 'code_workflow';
  readonly name: string;
  readonly definition: Definition;
  /** The workflow in the YAML format (`weft deploy` takes it as is). */
  readonly yaml: string;
  /** Phantom fields that carry the input and output types; never set. */
  readonly __input?: I;
  readonly __output?: O;
}

/** Builds a workflow in code: `defineWorkflow<In, Out>('order').task(...).task(...).build()`. */
export function defineWorkflow<I extends Json = Json, O extends Json = Json>(
  name: string,
): WorkflowBuilder<I, O> {
  return new WorkflowBuilder<I, O>(name);
}

/** The top level of a code-first workflow: its nodes and edges, plus name, schema, defaults and output. */
export class WorkflowBuilder<I extends Json = Json, O extends Json = Json> extends GraphBuilder {
  private readonly top: Doc;

  constructor(name: string) {
    super();
    this.top = { name };
  }

  /** A line about what the workflow does. */
  describe(text: string): this {
    this.top.description = text;
    return this;
  }

  /** JSON Schema the run input must satisfy, checked when a run starts. */
  inputSchema(schema: JsonObject): this {
    this.top.input_schema = schema;
    return this;
  }

  /** Defaults for every task node: retry policy, timeout and priority. */
  defaults(d: {
    readonly retry?: RetryOptions;
    readonly timeout?: Duration;
    readonly priority?: number;
  }): this {
    const out: Doc = {};
    if (d.retry) out.retry = retryFields(d.retry);
    if (d.timeout !== undefined) out.timeout = durationText(d.timeout);
    if (d.priority !== undefined) out.priority = d.priority;
    this.top.defaults = out;
    return this;
  }

  /** Mapping that computes the run's output; by default the outputs of the last nodes, keyed by id. */
  output(mapping: Mapping): this {
    this.top.output = mapping;
    return this;
  }

  /** The workflow as a YAML-shaped document. */
  document(): Doc {
    const { output, ...head } = this.top;
    return {
      ...head,
      nodes: [...this.nodes],
      ...(this.edges.length > 0 ? { edges: [...this.edges] } : {}),
      ...(output !== undefined ? { output } : {}),
    };
  }

  /** The workflow as YAML. */
  toYaml(): string {
    return toYaml(this.document());
  }

  /** Builds the workflow, or lists every problem (the same problems its YAML would have). */
  check(): Result<CodeWorkflow<I, O>, DefinitionProblem[]> {
    const yaml = this.toYaml();
    const parsed = parseDefinition(yaml);
    if (!parsed.ok) return err(parsed.error);
    return ok({ kind: 'code_workflow', name: parsed.value.name, definition: parsed.value, yaml });
  }

  /** Builds the workflow; throws `invalid_definition` listing every problem. */
  build(): CodeWorkflow<I, O> {
    const result = this.check();
    if (result.ok) return result.value;
    const lines = result.error.map(formatProblem);
    throw new WeftError(
      'invalid_definition',
      `workflow "${String(this.top.name)}" has ${lines.length} problem(s) (lines are those of its YAML, .toYaml()):\n${lines.join('\n')}`,
      422,
      { problems: result.error },
    );
  }
}
