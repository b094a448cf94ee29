import { definitionHash, formatProblem, parseDefinition } from '@weft/core';
import { describe, expect, it } from 'vitest';

function problems(yaml: string): string[] {
  const result = parseDefinition(yaml);
  if (result.ok) return [];
  return result.error.map(formatProblem);
}

describe('control and wait nodes at deploy', () => {
  it('reads every kind, bodies included, with their lines', () => {
    const result = parseDefinition(`name: all
nodes:
  - { id: route, kind: switch, expression: input.kind }
  - { id: pause, kind: wait, duration: 5m }
  - { id: approve, kind: wait_for_event, event: approved, correlation: input.id, timeout: 2d }
  - id: poll
    kind: loop
    while: "nodes.check.output.pending"
    max_iterations: 10
    body:
      nodes:
        - { id: check, task_type: status }
  - id: each
    kind: map
    items: input.items
    concurrency: 4
    task: { task_type: work, retry: { max_attempts: 2 } }
  - { id: calc, kind: transform, value: { x: "1" } }
  - { id: stop, kind: terminate, status: failed, reason: "'no'" }
edges:
  - { from: route, to: pause, case: a }
  - { from: route, to: approve, default: true }
  - { from: approve, to: poll }
  - { from: approve, to: stop, on: timeout }
  - { from: poll, to: each }
  - { from: pause, to: calc }
`);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const byId = new Map(result.value.nodes.map((n) => [n.id, n]));
    expect(byId.get('approve')).toMatchObject({ kind: 'wait_for_event', timeoutMs: 172_800_000, line: 5 });
    const poll = byId.get('poll');
    expect(poll?.kind === 'loop' && poll.body.nodes[0]).toMatchObject({ id: 'check', line: 12 });
    const each = byId.get('each');
    expect(each?.kind === 'map' && each.body.nodes[0]).toMatchObject({
      id: 'each.task',
      kind: 'task',
      taskType: 'work',
      retry: { maxAttempts: 2 },
    });
    expect(result.value.edges.find((e) => e.to === 'stop')?.when).toEqual({ kind: 'timeout' });
  });

  it('names the node and line of each problem', () => {
    const out = problems(`name: bad
nodes:
  - { id: route, kind: switch, expression: input.kind }
  - { id: a, task_type: t }
  - { id: b, task_type: t }
  - { id: w, kind: wait }
  - { id: e, kind: wait_for_event, event: done }
  - { id: l, kind: loop, while: "true", body: { nodes: [{ id: x, task_type: t }] } }
  - { id: m, kind: map, items: input.list, task: { task_type: t }, body: { nodes: [{ id: y, task_type: t }] } }
  - { id: z, kind: terminate, status: completed, reason: "'x'" }
edges:
  - { from: route, to: a, case: one }
  - { from: route, to: b }
  - { from: a, to: b, case: x }
  - { from: e, to: b, on: timeout }
`);
    expect(out).toEqual([
      'line 6, node "w": nodes[3]: a wait node needs either duration (like 2h) or until (an expression giving a time)',
      'line 8, node "l": nodes[5].max_iterations: is required (at most 10000): a loop needs a limit',
      'line 9, node "m": nodes[6]: give either body (a sub-graph) or task (one task per item), not both',
      'line 10, node "z": nodes[7]: reason is for status failed; a completed run takes an output',
      'line 14, node "a": edge a -> b: case is only for edges out of a switch node, and "a" is a task node',
      'line 15, node "e": edge e -> b: on: timeout, but "e" has no timeout; give it one (like timeout: 2d)',
      'line 13, node "route": edge route -> b leaves switch "route" without a label; give it case: <value> or default: true',
    ]);
  });

  it('keeps edges inside one body, and reads of body nodes inside their body', () => {
    const out = problems(`name: scopes
nodes:
  - { id: start, task_type: t }
  - id: poll
    kind: loop
    while: "false"
    max_iterations: 3
    body:
      nodes:
        - { id: check, task_type: t, input: { s: nodes.start.output, later: nodes.after.output } }
        - { id: check, task_type: t }
      edges:
        - { from: check, to: start }
  - { id: after, task_type: t, input: { c: nodes.check.output } }
edges:
  - { from: start, to: poll }
  - { from: poll, to: after }
  - { from: start, to: check }
`);
    expect(out).toEqual([
      'line 11, node "check": node id "check" is used twice (first on line 10); ids must be unique',
      'line 18, node "check": edge start -> check: "check" is inside the body of "poll", so this edge would cross a body\'s boundary; edges stay within one body (or the top level)',
      'line 13, node "start": edge check -> start: "start" is a top-level node, so this edge would cross a body\'s boundary; edges stay within one body (or the top level)',
      'line 10, node "check": input reads nodes.after, which does not run before "poll" (the loop around "check"); add an edge path from "after" to "poll"',
      'line 14, node "after": input reads nodes.check, which is inside the body of loop "poll" and runs once per pass; read its results through nodes.poll.output (a list, one entry per pass)',
    ]);
  });

  it('does not count body layout in the content hash', () => {
    const one = parseDefinition(
      'name: h\nnodes:\n  - id: m\n    kind: map\n    items: input.x\n    body:\n      nodes:\n        - { id: a, task_type: t }\n        - { id: b, task_type: t }\n      edges: [{ from: a, to: b }]\n',
    );
    const two = parseDefinition(
      'name: h\nnodes:\n  - id: m\n    kind: map\n    items: input.x\n    body:\n      nodes:\n        - id: b\n          task_type: t\n        - id: a\n          task_type: t\n      edges:\n        - from: a\n          to: b\n',
    );
    expect(one.ok && two.ok).toBe(true);
    if (one.ok && two.ok) expect(definitionHash(one.value)).toBe(definitionHash(two.value));
  });
});
