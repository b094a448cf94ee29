import { formatProblem, parseDefinition } from '@weft/core';
import { describe, expect, it } from 'vitest';

function problems(yaml: string): string[] {
  const result = parseDefinition(yaml);
  return result.ok ? [] : result.error.map(formatProblem);
}

describe('validation reports every problem of a file in one pass', () => {
  it('a node whose fields are broken does not hide a duplicate id or an edge to an unknown node', () => {
    const out = problems(`name: orders
nodes:
  - id: charge
    task_type: payments.charge
  - id: charge
    task_typo: payments.refund
  - id: ship
    task_type: shipping.dispatch
edges:
  - { from: charge, to: shipp }
  - { from: ship, to: charge }
`);
    expect(out).toContain('line 5, node "charge": nodes[1].task_type: is required');
    expect(out).toContain(
      'line 5, node "charge": node id "charge" is used twice (first on line 3); ids must be unique',
    );
    expect(out).toContain('line 10: edge charge -> shipp: there is no node "shipp" (did you mean "ship"?)');
    expect(out).toHaveLength(4); // and the unknown field task_typo
  });

  it('a broken node stays in the graph: edges to it are fine and a cycle through it is found', () => {
    const out = problems(`name: routing
nodes:
  - id: price
    task_type: orders.price
  - id: route
    kind: switch
  - id: notify
    task_type: mail.send
    retires: 3
edges:
  - { from: price, to: route }
  - { from: route, to: price }
  - { from: notify, to: nowhere }
`);
    expect(out).toEqual([
      'line 5, node "route": nodes[1].expression: is required',
      'line 9, node "notify": nodes[2]: unknown field "retires" for a task node (expected id, kind, description, join, task_type, input, retry, timeout, priority, semaphores, rate_limit, limit_key, compensate)',
      'line 13: edge notify -> nowhere: there is no node "nowhere"',
      'line 3, node "price": the graph has a cycle: price -> route -> price; a workflow graph must be acyclic (repeat work with a loop node)',
    ]);
  });

  it('a node of an unknown kind is reported for its kind alone and can still be reached', () => {
    const out = problems(`name: onboarding
nodes:
  - id: welcome
    kind: mail
    template: welcome
  - id: done
    kind: noop
edges:
  - { from: welcome, to: done }
  - { from: done, to: welcome }
`);
    expect(out).toHaveLength(2);
    expect(out[0]).toMatch(/^line 4, node "welcome": nodes\[0\]\.kind: must be one of task, noop/);
    expect(out[1]).toMatch(/the graph has a cycle: welcome -> done -> welcome/);
  });

  it('the body of a loop whose own fields are broken is still checked', () => {
    const out = problems(`name: export
nodes:
  - id: request
    task_type: reports.request
  - id: poll
    kind: loop
    while: "nodes.check.output.status != 'ready'"
    body:
      nodes:
        - id: check
          task_type: reports.status
          input: { export_id: nodes.reqest.output.export_id }
  - id: download
    task_type: reports.download
edges:
  - { from: request, to: poll }
  - { from: request, to: check }
`);
    expect(out).toEqual([
      'line 5, node "poll": nodes[1].max_iterations: is required (at most 10000): a loop needs a limit',
      'line 17, node "check": edge request -> check: "check" is inside the body of "poll", so this edge would cross a body\'s boundary; edges stay within one body (or the top level)',
      'line 10, node "check": input reads nodes.reqest, but there is no node "reqest" (did you mean "request"?)',
    ]);
  });

  it('a broken edge label is reported once, not again as a missing label', () => {
    const out = problems(`name: routing
nodes:
  - { id: route, kind: switch, expression: input.tier }
  - { id: gold, task_type: orders.ship }
  - { id: standard, task_type: orders.ship }
edges:
  - { from: route, to: gold, case: { tier: gold } }
  - { from: route, to: standard, default: true }
  - { from: gold, to: missing }
`);
    expect(out).toEqual([
      'line 7: edges[0].case: must be a value (text, a number or true/false) or a list of them, not a map',
      'line 9: edge gold -> missing: there is no node "missing"',
    ]);
  });

  it('a repeated key does not hide the rest of the file', () => {
    const out = problems(`name: x
name: y
nodes:
  - id: a
    task_type: t
edges:
  - { from: a, to: b }
`);
    expect(out).toEqual([
      'line 2: YAML syntax: the key "name" appears twice in one map (first on line 1)',
      'line 7: edge a -> b: there is no node "b"',
    ]);
  });

  it('a YAML syntax error is reported at its own line and column (here the "]" that should close the map)', () => {
    const result = parseDefinition(`name: orders
nodes:
  - id: reserve
    task_type: inventory.reserve
  - id: charge
    task_type: payments.charge
edges:
  - { from: reserve, to: charge ]
`);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toHaveLength(1);
    expect(result.error[0]).toMatchObject({ line: 8, column: 33 });
    expect(formatProblem(result.error[0]!)).toMatch(/^line 8: YAML syntax at column 33: Flow map/);
  });
});
