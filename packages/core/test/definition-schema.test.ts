import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { definitionJsonSchema, parseDefinition } from '@weft/core';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = new URL('../../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const schema = definitionJsonSchema();
const check = new Ajv({ allErrors: true, strict: false }).compile(schema);

/** What the schema and the validator say of one YAML file. */
function verdicts(yaml: string): { schema: boolean; validator: boolean; why: string } {
  const schemaOk = check(parse(yaml)) === true;
  const parsed = parseDefinition(yaml);
  const why = [
    ...(check.errors ?? []).map((e) => `schema: ${e.instancePath} ${e.message}`),
    ...(parsed.ok ? [] : parsed.error.map((p) => `validator: ${p.path} ${p.message}`)),
  ].join('\n');
  return { schema: schemaOk, validator: parsed.ok, why };
}

const examples = readdirSync(fileURLToPath(new URL('examples', root))).filter((f) => f.endsWith('.yaml'));

/** One small valid definition of each node kind and field shape, beside the examples. */
const valid: Record<string, string> = {
  triggers: `name: tr
triggers:
  - { event: order.placed, filter: "data.amount > 100", input: { order: data.id }, idempotency: data.id }
  - { event: "billing/invoice:paid" }
nodes: [{ id: a, task_type: a.b }]
`,
  'every task field': `name: t
defaults: { retry: { max_attempts: 5, backoff: fixed, delay: 1s, max_delay: 1m, factor: 1.5 }, timeout: 1h, priority: 3 }
limits: { concurrency: { a.b: 2 }, semaphores: { db: 4 }, rates: { api: { limit: 10, per: 1m } }, quota: 100 }
nodes:
  - { id: a, kind: task, task_type: a.b, input: { x: input.x }, timeout: 30s, priority: -5,
      semaphores: { db: 2 }, rate_limit: api, compensate: { task_type: a.undo, timeout: 5m } }
  - { id: b, task_type: a.c, semaphores: [db], join: any, description: second }
edges: [{ from: a, to: [b] }]
on_status: { url: https://example.com/hook, statuses: [completed, failed] }
`,
  'control flow': `name: cf
nodes:
  - { id: s, kind: switch, expression: input.kind }
  - { id: w, kind: wait, duration: 1h30m }
  - { id: u, kind: wait, until: "input.at" }
  - { id: e, kind: wait_for_event, event: approved, correlation: input.id, timeout: 2d }
  - { id: late, kind: noop }
  - id: l
    kind: loop
    while: "$count(nodes.step.output) < 3"
    max_iterations: 10
    body: { nodes: [{ id: step, task_type: s.step }], output: nodes.step.output }
  - { id: m, kind: map, items: input.items, concurrency: 4, task: { task_type: m.item } }
  - { id: t, kind: transform, value: "input", vars: { seen: "true" } }
  - { id: x, kind: terminate, status: failed, reason: no }
edges:
  - { from: s, to: w, case: [a, 1, true] }
  - { from: s, to: u, default: true }
  - { from: w, to: e }
  - { from: e, to: late, on: timeout }
  - { from: e, to: l }
  - { from: u, to: m }
  - { from: m, to: t }
  - { from: l, to: x }
`,
  'effects and people': `name: fx
nodes:
  - { id: h, kind: human, title: Approve, assignees: [finance], form: { type: object }, deadline: { after: 2d, to: esc } }
  - { id: esc, kind: noop }
  - { id: c, kind: sub_workflow, definition: payment, version: 2, input: input, retry: { max_attempts: 2 }, timeout: 1h }
  - { id: sw, kind: start_workflow, definition: payment }
  - { id: ev, kind: event, sink: audit, topic: order.done, payload: input }
  - { id: call, kind: http, url: "'https://example.com'", method: POST, headers: { x-a: "'1'" }, body: input,
      timeout: 10s, success: [200, 2xx], retry: { max_attempts: 2 }, priority: 1, rate_limit: api }
edges: [{ from: h, to: c }, { from: c, to: [sw, ev, call] }]
`,
};

/** Files the validator refuses for what they are, not for their graph: the schema must refuse them too. */
const invalid: Record<string, string> = {
  'a trigger without an event': `name: tr
triggers: [{ filter: "true" }]
nodes: [{ id: a, task_type: a.b }]
`,
  'a trigger with an unknown field': `name: tr
triggers: [{ event: e, when: "true" }]
nodes: [{ id: a, task_type: a.b }]
`,
  'no name': 'nodes: [{ id: a, task_type: x }]\n',
  'a bad name': 'name: "-bad"\nnodes: [{ id: a, task_type: x }]\n',
  'no nodes': 'name: n\n',
  'an unknown top-level field': 'name: n\nnodse: []\nnodes: [{ id: a, task_type: x }]\n',
  'a node without id': 'name: n\nnodes: [{ task_type: x }]\n',
  'a node id with a dash': 'name: n\nnodes: [{ id: a-b, task_type: x }]\n',
  'an unknown kind': 'name: n\nnodes: [{ id: a, kind: sleep }]\n',
  'a task without task_type': 'name: n\nnodes: [{ id: a }]\n',
  'a field of another kind': 'name: n\nnodes: [{ id: a, task_type: x, expression: "1" }]\n',
  'a misspelt task field': 'name: n\nnodes: [{ id: a, task_type: x, retyr: {} }]\n',
  'a bare number as duration': 'name: n\nnodes: [{ id: a, task_type: x, timeout: 30 }]\n',
  'a word as duration': 'name: n\nnodes: [{ id: a, task_type: x, timeout: soon }]\n',
  'priority out of range': 'name: n\nnodes: [{ id: a, task_type: x, priority: 5000 }]\n',
  'a bad backoff': 'name: n\nnodes: [{ id: a, task_type: x, retry: { backoff: linear } }]\n',
  'zero attempts': 'name: n\nnodes: [{ id: a, task_type: x, retry: { max_attempts: 0 } }]\n',
  'a switch without expression': 'name: n\nnodes: [{ id: a, kind: switch }]\n',
  'a loop without max_iterations':
    'name: n\nnodes: [{ id: l, kind: loop, while: "false", body: { nodes: [{ id: b, task_type: x }] } }]\n',
  'a loop past its limit':
    'name: n\nnodes: [{ id: l, kind: loop, while: "false", max_iterations: 20000, body: { nodes: [{ id: b, task_type: x }] } }]\n',
  'a terminate with a bad status': 'name: n\nnodes: [{ id: t, kind: terminate, status: done }]\n',
  'a human without title': 'name: n\nnodes: [{ id: h, kind: human }]\n',
  'an event with a bad sink': 'name: n\nnodes: [{ id: e, kind: event, sink: "a b" }]\n',
  'an http node with a bad method':
    'name: n\nnodes: [{ id: h, kind: http, url: "\'https://x\'", method: FETCH }]\n',
  'an http node with a bad status':
    'name: n\nnodes: [{ id: h, kind: http, url: "\'https://x\'", success: 700 }]\n',
  'an edge without to':
    'name: n\nnodes: [{ id: a, task_type: x }, { id: b, task_type: x }]\nedges: [{ from: a }]\n',
  'an edge with two labels':
    'name: n\nnodes: [{ id: s, kind: switch, expression: "1" }, { id: b, task_type: x }]\nedges: [{ from: s, to: b, case: 1, default: true }]\n',
  'a default that is not true':
    'name: n\nnodes: [{ id: s, kind: switch, expression: "1" }, { id: b, task_type: x }]\nedges: [{ from: s, to: b, default: false }]\n',
  'on_status with url and sink':
    'name: n\nnodes: [{ id: a, task_type: x }]\non_status: { url: "https://x", sink: s }\n',
  'a rate without per':
    'name: n\nlimits: { rates: { api: { limit: 3 } } }\nnodes: [{ id: a, task_type: x }]\n',
  'a quota below zero': 'name: n\nlimits: { quota: -1 }\nnodes: [{ id: a, task_type: x }]\n',
};

describe('the JSON Schema of definition files', () => {
  it('is the one kept in docs/reference (npm run docs:schema writes it)', () => {
    const kept = JSON.parse(read('docs/reference/definition.schema.json'));
    expect(kept, 'docs/reference/definition.schema.json is stale: run `npm run docs:schema`').toEqual(schema);
  });

  it('accepts every example, as the validator does, and each example points editors at it', () => {
    expect(examples.length).toBeGreaterThan(5);
    for (const file of examples) {
      const yaml = read(`examples/${file}`);
      expect(yaml.split('\n')[0], file).toBe(
        '# yaml-language-server: $schema=../docs/reference/definition.schema.json',
      );
      expect(verdicts(yaml), file).toEqual({ schema: true, validator: true, why: '' });
    }
  });

  it('accepts every field shape and node kind the validator accepts', () => {
    for (const [name, yaml] of Object.entries(valid))
      expect(verdicts(yaml), name).toEqual({ schema: true, validator: true, why: '' });
  });

  it('refuses what the validator refuses for its shape', () => {
    for (const [name, yaml] of Object.entries(invalid)) {
      const v = verdicts(yaml);
      expect(v.validator, `${name}: the validator accepts it`).toBe(false);
      expect(v.schema, `${name}: the schema accepts it`).toBe(false);
    }
  });

  it('accepts every definition in the guide and the README that the validator accepts', () => {
    const guide = fileURLToPath(new URL('docs/guide', root));
    const pages = [
      'README.md',
      ...readdirSync(guide)
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/guide/${f}`),
    ];
    let checked = 0;
    for (const page of pages) {
      for (const [, yaml] of read(page).matchAll(/```yaml\n([\s\S]*?)```/g)) {
        if (!/^name:/m.test(yaml!) || !/^nodes:/m.test(yaml!)) continue;
        const v = verdicts(yaml!);
        if (!v.validator) continue;
        checked++;
        expect(v.schema, `${page}: ${v.why}\n${yaml}`).toBe(true);
      }
    }
    expect(checked).toBeGreaterThan(3);
  });
});
