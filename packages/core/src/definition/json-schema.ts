import type { JsonObject } from '../json.js';
import { LIMIT_NAME_PATTERN } from './limit-types.js';
import { HTTP_METHODS } from './node-types.js';
import { MAX_LOOP_ITERATIONS } from './parse-control-flow.js';
import { MAX_TRIGGERS } from './parse-triggers.js';
import {
  EVENT_NAME_PATTERN,
  NAME_PATTERN,
  NODE_ID_PATTERN,
  SIGNAL_NAME_PATTERN,
  SINK_NAME_PATTERN,
  TASK_TYPE_PATTERN,
} from './patterns.js';
import { NODE_KINDS } from './read-nodes.js';

const text = (description: string, pattern?: RegExp) => ({
  type: 'string',
  description,
  ...(pattern ? { pattern: pattern.source } : {}),
});
const int = (description: string, minimum: number, maximum?: number) => ({
  type: 'integer',
  description,
  minimum,
  ...(maximum !== undefined ? { maximum } : {}),
});
const mapping = (description: string) => ({
  description: `${description} (strings are JSONata expressions)`,
});
const expression = (description: string) => text(`${description} (a JSONata expression)`);
const ref = (name: string, description?: string) => ({
  $ref: `#/definitions/${name}`,
  ...(description ? { description } : {}),
});
const oneOrMany = (item: object, description: string) => ({
  description,
  anyOf: [item, { type: 'array', minItems: 1, items: item }],
});

/** A closed map: exactly these fields, these required. */
const closed = (properties: Record<string, object>, required: string[] = [], description?: string) => ({
  type: 'object',
  ...(description ? { description } : {}),
  additionalProperties: false,
  ...(required.length > 0 ? { required } : {}),
  properties,
});

const nodeCommon = {
  id: text('unique node id: letters, digits and _, starting with a letter or _', NODE_ID_PATTERN),
  kind: { enum: NODE_KINDS, description: 'what the node does (task by default)' },
  description: text('what the node is for'),
  join: {
    enum: ['all', 'any'],
    description: 'with several incoming edges: wait for all (default) or the first',
  },
};

const gates = {
  semaphores: {
    description: 'permits the task needs while it runs: a list of names, or a map of name: permits',
    anyOf: [
      { type: 'array', items: text('a semaphore', LIMIT_NAME_PATTERN) },
      {
        type: 'object',
        propertyNames: { pattern: LIMIT_NAME_PATTERN.source },
        additionalProperties: int('permits', 1, 1_000_000),
      },
    ],
  },
  rate_limit: text('the rate-limit key each start counts against', LIMIT_NAME_PATTERN),
};

const taskFields = {
  task_type: text('what workers poll for', TASK_TYPE_PATTERN),
  input: mapping("the task's input; the run input when absent"),
  retry: ref('retry'),
  timeout: ref('duration', 'longest one attempt may run'),
  priority: ref('priority'),
  ...gates,
  limit_key: text(
    'expression whose value splits the semaphores and rate limit by key (per customer, per tenant)',
  ),
  compensate: ref('compensate'),
};

const target = {
  definition: text("the child's definition", NAME_PATTERN),
  version: int('pins a version; the latest when absent', 1),
  input: mapping("the child's input; the run input when absent"),
};

/** Each kind's own fields and required ones; every node also has `nodeCommon`. */
const kinds: Record<string, [Record<string, object>, string[]]> = {
  task: [taskFields, ['task_type']],
  noop: [{}, []],
  human: [
    {
      title: text('what the inbox shows'),
      input: mapping('what the person sees'),
      form: { type: 'object', description: 'a JSON Schema the answer must match' },
      assignees: { type: 'array', items: { type: 'string' }, description: 'who it is for' },
      deadline: {
        description: 'a duration that fails the run when it passes, or {after, to} that takes those edges',
        anyOf: [
          ref('duration'),
          closed({ after: ref('duration'), to: oneOrMany(text('a node id'), 'the nodes to go to') }, [
            'after',
          ]),
        ],
      },
    },
    ['title'],
  ],
  switch: [
    { expression: expression('its value picks the outgoing edges by their case labels') },
    ['expression'],
  ],
  wait: [
    {
      duration: ref('duration', 'how long to wait'),
      until: expression('a time: ISO 8601 text or milliseconds since 1970'),
    },
    [],
  ],
  wait_for_event: [
    {
      event: text('the signal name', SIGNAL_NAME_PATTERN),
      correlation: expression('only signals with this key are taken'),
      timeout: ref('duration', 'then the on: timeout edges are taken'),
    },
    ['event'],
  ],
  loop: [
    {
      while: expression('checked after each pass: another pass while it holds'),
      max_iterations: int('most passes', 1, MAX_LOOP_ITERATIONS),
      body: ref('body'),
    },
    ['while', 'max_iterations', 'body'],
  ],
  map: [
    {
      items: expression('must give a list'),
      concurrency: int('most items at once', 1, 100_000),
      task: closed(taskFields, ['task_type'], 'one task per item'),
      body: ref('body', 'a sub-graph per item'),
    },
    ['items'],
  ],
  transform: [
    {
      value: mapping("the node's output"),
      vars: { type: 'object', description: 'run variables to set, each a mapping' },
      attributes: {
        type: 'object',
        description: 'search attributes to set on the run, each a mapping to text, a number or a boolean',
      },
    },
    ['value'],
  ],
  terminate: [
    {
      status: { enum: ['completed', 'failed'], description: 'how the run ends' },
      output: mapping("with completed: the run's output"),
      reason: text("with failed: the run's failure reason"),
    },
    ['status'],
  ],
  sub_workflow: [{ ...target, retry: ref('retry'), timeout: ref('duration') }, ['definition']],
  start_workflow: [target, ['definition']],
  event: [
    {
      sink: text('a sink configured on the server', SINK_NAME_PATTERN),
      topic: text("the message's type"),
      payload: mapping("the message's data; the run input when absent"),
    },
    ['sink'],
  ],
  http: [
    {
      url: expression('an http or https URL'),
      method: { enum: HTTP_METHODS, description: 'GET by default' },
      headers: { type: 'object', description: 'request headers, each a mapping' },
      body: mapping('sent as JSON'),
      timeout: ref('duration', 'up to 1h; 30s by default'),
      success: oneOrMany(
        {
          anyOf: [
            { type: 'integer', minimum: 100, maximum: 599 },
            { type: 'string', pattern: '^[1-5]xx$' },
          ],
        },
        'status codes (200) or classes (2xx) that succeed; 2xx by default',
      ),
      retry: ref('retry'),
      priority: ref('priority'),
      ...gates,
    },
    ['url'],
  ],
};

/** JSON Schema's `if`/`then`. */
function ifThen(condition: object, then: object): object {
  return { if: condition, then };
}

/** A node: the common fields, and each kind's own (a node without `kind` is a task). */
function nodeSchema(): object {
  const branches = Object.entries(kinds).map(([kind, [own, required]]) =>
    ifThen(
      // No kind, or `kind: task`: a task.
      kind === 'task'
        ? { anyOf: [{ not: { required: ['kind'] } }, { properties: { kind: { const: 'task' } } }] }
        : { required: ['kind'], properties: { kind: { const: kind } } },
      closed({ ...nodeCommon, ...own }, ['id', ...required]),
    ),
  );
  return { type: 'object', required: ['id'], properties: nodeCommon, allOf: branches };
}

const edge = {
  ...closed(
    {
      from: text('the node the edge leaves'),
      to: oneOrMany(text('a node id'), 'the node (or nodes, in parallel) it leads to'),
      case: oneOrMany(
        { type: ['string', 'number', 'boolean'] },
        'out of a switch: taken when its value equals one of these',
      ),
      default: { const: true, description: 'out of a switch: taken when no case matches' },
      on: { const: 'timeout', description: 'out of a wait_for_event: taken only on timeout' },
    },
    ['from', 'to'],
  ),
  not: {
    anyOf: [{ required: ['case', 'default'] }, { required: ['case', 'on'] }, { required: ['default', 'on'] }],
  },
};

const counts = (description: string, min: number, max: number) => ({
  type: 'object',
  description,
  propertyNames: { pattern: LIMIT_NAME_PATTERN.source },
  additionalProperties: int('the count', min, max),
});

/**
 * A JSON Schema (draft-07) of definition files, for editors: completion, hover text and checks while a
 * YAML graph is written. It is built from the validator's own patterns, kinds and limits; what it cannot
 * say (the graph: edges between existing nodes, no cycles, expressions that compile) only the validator
 * checks, so a file the schema accepts may still be refused on deploy, never the other way round.
 */
export function definitionJsonSchema(): JsonObject {
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Weft workflow definition',
    ...closed(
      {
        name: text('the definition name', NAME_PATTERN),
        description: text('shown with the definition'),
        input_schema: {
          type: 'object',
          description: 'a JSON Schema; a start whose input does not match is refused',
        },
        defaults: closed(
          { retry: ref('retry'), timeout: ref('duration'), priority: ref('priority') },
          [],
          'applied to every task and http node that does not say otherwise',
        ),
        nodes: { type: 'array', minItems: 1, items: ref('node') },
        edges: { type: 'array', items: ref('edge') },
        output: mapping("the run's output; by default the outputs of the last nodes"),
        limits: closed(
          {
            concurrency: counts('most tasks of each type leased at once', 0, 1_000_000),
            semaphores: counts('permits of each semaphore', 1, 1_000_000),
            rates: {
              type: 'object',
              propertyNames: { pattern: LIMIT_NAME_PATTERN.source },
              additionalProperties: closed(
                {
                  limit: int('starts per window', 1, 1_000_000),
                  per: ref('duration', 'the window, up to 31d'),
                },
                ['limit', 'per'],
              ),
            },
            quota: int('most running (or paused) runs in the namespace', 0, 10_000_000),
          },
          [],
          'limits of the namespace, set when the definition is deployed',
        ),
        on_status: {
          ...closed({
            url: text('an http or https URL that gets a signed webhook when the run ends'),
            sink: text('a configured sink to publish to instead', SINK_NAME_PATTERN),
            statuses: {
              type: 'array',
              minItems: 1,
              items: { enum: ['completed', 'failed', 'cancelled', 'terminated'] },
            },
          }),
          not: { required: ['url', 'sink'] },
        },
        triggers: {
          type: 'array',
          maxItems: MAX_TRIGGERS,
          description: 'events (POST /v1/events) that start a run of the latest version',
          items: closed(
            {
              event: text('the event name', EVENT_NAME_PATTERN),
              filter: text('a JSONata condition on the event (data, event); the run starts when it is true'),
              input: mapping("the run's input, from the event (data, event); the event's data by default"),
              idempotency: text('a JSONata expression whose value deduplicates runs instead of the event id'),
            },
            ['event'],
          ),
        },
      },
      ['name', 'nodes'],
    ),
    definitions: {
      node: nodeSchema(),
      edge,
      body: closed(
        {
          nodes: { type: 'array', minItems: 1, items: ref('node') },
          edges: { type: 'array', items: ref('edge') },
          output: mapping("one pass's or item's output"),
        },
        ['nodes'],
      ),
      duration: {
        type: 'string',
        description: 'a duration such as 250ms, 30s, 5m, 1h30m or 2d',
        pattern: '^\\s*(\\d+(\\.\\d+)?(ms|s|m|h|d))+\\s*$',
      },
      priority: int('higher first among queued tasks of the type', -1000, 1000),
      retry: closed({
        max_attempts: int('attempts in all, the first included', 1, 1000),
        backoff: { enum: ['fixed', 'exponential'] },
        delay: ref('duration', 'wait before the second attempt'),
        max_delay: ref('duration', 'cap on the wait between attempts'),
        factor: { type: 'number', minimum: 1, description: 'growth per attempt for exponential backoff' },
      }),
      compensate: closed(
        {
          task_type: text('the task that undoes', TASK_TYPE_PATTERN),
          input: mapping("by default the compensated task's output"),
          retry: ref('retry'),
          timeout: ref('duration'),
        },
        ['task_type'],
        'what undoes the task if the run fails for good',
      ),
    },
  };
  return JSON.parse(JSON.stringify(schema)) as JsonObject;
}
