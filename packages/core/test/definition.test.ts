import { definitionHash, formatProblem, parseDefinition, parseDuration } from '@weft/core';
import { describe, expect, it } from 'vitest';

const valid = `
name: orders
description: reserve, charge, ship
input_schema:
  type: object
  required: [orderId]
defaults:
  retry: { max_attempts: 4, backoff: fixed, delay: 2s }
nodes:
  - id: reserve
    task_type: inventory.reserve
    input:
      order: input.orderId
  - id: charge
    task_type: payments.charge
    retry: { max_attempts: 5, backoff: exponential, delay: 1s, max_delay: 1m }
    timeout: 30s
    input:
      amount: nodes.reserve.output.total
  - id: notify
    task_type: mail.send
  - id: ship
    task_type: shipping.ship
edges:
  - from: reserve
    to: [charge, notify]
  - { from: charge, to: ship }
  - { from: notify, to: ship }
`;

function problems(yaml: string): string[] {
  const result = parseDefinition(yaml);
  if (result.ok) return [];
  return result.error.map(formatProblem);
}

describe('parseDefinition', () => {
  it('reads a valid definition with defaults, retries, timeouts and mappings', () => {
    const result = parseDefinition(valid);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const def = result.value;
    expect(def.name).toBe('orders');
    expect(def.nodes.map((n) => n.id)).toEqual(['reserve', 'charge', 'notify', 'ship']);
    const [reserve, charge] = def.nodes;
    expect(reserve).toMatchObject({ kind: 'task', taskType: 'inventory.reserve', line: 10 });
    expect(reserve?.kind === 'task' && reserve.retry).toEqual({
      maxAttempts: 4,
      backoff: 'fixed',
      delayMs: 2000,
      maxDelayMs: 300000,
      factor: 2,
    });
    expect(charge?.kind === 'task' && charge.retry).toMatchObject({
      maxAttempts: 5,
      backoff: 'exponential',
      delayMs: 1000,
      maxDelayMs: 60000,
    });
    expect(charge?.kind === 'task' && charge.timeoutMs).toBe(30000);
    expect(def.edges).toHaveLength(4);
    expect(def.inputSchema).toEqual({ type: 'object', required: ['orderId'] });
  });

  it('rejects an empty graph', () => {
    expect(problems('name: x\nnodes: []\n')).toEqual(['the graph is empty: add at least one node']);
  });

  it('names the node and line of a duplicate id', () => {
    const out = problems('name: x\nnodes:\n  - id: a\n    task_type: t\n  - id: a\n    task_type: t\n');
    expect(out).toEqual([
      'line 5, node "a": node id "a" is used twice (first on line 3); ids must be unique',
    ]);
  });

  it('rejects edges to unknown nodes with a suggestion, and self edges', () => {
    const out = problems(
      'name: x\nnodes:\n  - id: fetch\n    task_type: t\n  - id: store\n    task_type: t\nedges:\n  - { from: fetch, to: stor }\n  - { from: store, to: store }\n',
    );
    expect(out).toEqual([
      'line 8: edge fetch -> stor: there is no node "stor" (did you mean "store"?)',
      'line 9, node "store": edge store -> store points at its own node',
    ]);
  });

  it('finds cycles with Kahn and names one', () => {
    const out = problems(
      'name: x\nnodes:\n  - { id: a, task_type: t }\n  - { id: b, task_type: t }\n  - { id: c, task_type: t }\nedges:\n  - { from: a, to: b }\n  - { from: b, to: c }\n  - { from: c, to: b }\n',
    );
    expect(out).toEqual([
      'line 4, node "b": the graph has a cycle: b -> c -> b; a workflow graph must be acyclic (repeat work with a loop node)',
    ]);
  });

  it('rejects unknown kinds and unknown fields, suggesting the likely one', () => {
    const out = problems(
      'name: x\nnodes:\n  - id: a\n    kind: tsk\n  - id: b\n    task_type: t\n    retries: 3\n',
    );
    expect(out).toEqual([
      'line 4, node "a": nodes[0].kind: must be one of task, noop, human, switch, wait, wait_for_event, loop, map, transform, terminate, sub_workflow, start_workflow, event, http, not text "tsk" (did you mean "task"?)',
      'line 7, node "b": nodes[1]: unknown field "retries" for a task node (expected id, kind, description, join, task_type, input, retry, timeout, priority, semaphores, rate_limit, limit_key, compensate) (did you mean "retry"?)',
    ]);
  });

  it('rejects bad durations with the line', () => {
    const out = problems(
      'name: x\nnodes:\n  - id: a\n    task_type: t\n    timeout: 10 minutes\n    retry:\n      delay: 5\n',
    );
    expect(out).toEqual([
      'line 7, node "a": nodes[0].retry.delay: must be a duration such as 30s, 5m or 1h, not number 5',
      'line 5, node "a": nodes[0].timeout: "10 minutes" is not a duration; write it like 250ms, 30s, 5m, 1h30m or 2d',
    ]);
  });

  it('rejects references to unknown nodes and to nodes that do not run before', () => {
    const out = problems(
      'name: x\nnodes:\n  - id: a\n    task_type: t\n    input: { v: nodes.b.output }\n  - id: b\n    task_type: t\n    input: { v: nodes.zz.output }\nedges:\n  - { from: a, to: b }\n',
    );
    expect(out).toEqual([
      'line 3, node "a": input reads nodes.b, which does not run before "a"; add an edge path from "b" to "a"',
      'line 6, node "b": input reads nodes.zz, but there is no node "zz"',
    ]);
  });

  it('reports expressions that do not parse', () => {
    const out = problems('name: x\nnodes:\n  - id: a\n    task_type: t\n    input: { v: "input.(" }\n');
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(
      /^line 3, node "a": input\.v: cannot parse expression "input\.\(" \(at character \d+\)/,
    );
  });

  it('reports YAML syntax errors and duplicate keys with their line', () => {
    expect(problems('name: x\nname: y\nnodes: []\n')[0]).toBe(
      'line 2: YAML syntax: the key "name" appears twice in one map (first on line 1)',
    );
    expect(problems('name: [x\n')[0]).toMatch(/^line \d+: YAML syntax/);
  });

  it('rejects an invalid input schema', () => {
    const out = problems('name: x\ninput_schema: { type: wrong }\nnodes:\n  - { id: a, task_type: t }\n');
    expect(out[0]).toMatch(/^input_schema is not a valid JSON Schema/);
  });

  it('lists every problem at once', () => {
    const out = problems(
      'name: "bad name!"\nnodes:\n  - id: 1a\n  - id: b\n    task_type: t\n    timeout: soon\n',
    );
    expect(out.length).toBe(3);
  });
});

describe('definitionHash', () => {
  it('is the same for the same meaning and changes with behaviour', () => {
    const a = parseDefinition(valid);
    const reformatted = parseDefinition(
      `# a comment\n${valid.replace('  - { from: charge, to: ship }\n', '  - from: charge\n    to: ship\n')}`,
    );
    const changed = parseDefinition(valid.replace('timeout: 30s', 'timeout: 31s'));
    if (!a.ok || !reformatted.ok || !changed.ok) throw new Error('fixture invalid');
    expect(definitionHash(a.value)).toBe(definitionHash(reformatted.value));
    expect(definitionHash(a.value)).not.toBe(definitionHash(changed.value));
  });
});

describe('parseDuration', () => {
  it('reads units and combinations', () => {
    expect(parseDuration('250ms')).toEqual({ ok: true, value: 250 });
    expect(parseDuration('1h30m')).toEqual({ ok: true, value: 5_400_000 });
    expect(parseDuration('2d')).toEqual({ ok: true, value: 172_800_000 });
    expect(parseDuration('1.5s')).toEqual({ ok: true, value: 1500 });
  });
  it('refuses bare numbers and junk', () => {
    expect(parseDuration('30').ok).toBe(false);
    expect(parseDuration('5 mins').ok).toBe(false);
    expect(parseDuration('').ok).toBe(false);
  });
});
