import { compileWorkflow, type Definition, parseDefinition } from '@weft/core';
import { describe, expect, it } from 'vitest';

const yaml = `
name: refunds
nodes:
  - id: check
    task_type: refunds.check
    retry: { max_attempts: 2 }
  - id: each
    kind: map
    items: input.lines
    body:
      nodes:
        - { id: refund, task_type: refunds.pay }
edges:
  - { from: check, to: each }
`;

describe('definitions are frozen once read', () => {
  it('a parsed definition, its nodes, their policies and bodies cannot be changed', () => {
    const parsed = parseDefinition(yaml);
    if (!parsed.ok) throw new Error(parsed.error.map((p) => p.message).join('\n'));
    const def = parsed.value as unknown as { nodes: Record<string, unknown>[] };
    expect(() => {
      def.nodes[0]!.id = 'other';
    }).toThrow(TypeError);
    expect(() => {
      (def.nodes[0]!.retry as Record<string, unknown>).maxAttempts = 9;
    }).toThrow(TypeError);
    expect(() => {
      ((def.nodes[1]!.body as { nodes: unknown[] }).nodes as unknown[]).push({});
    }).toThrow(TypeError);
    expect(parsed.value.nodes[0]?.id).toBe('check');
  });

  it('compiling a definition built elsewhere (read back from a store) freezes it too', () => {
    const parsed = parseDefinition(yaml);
    if (!parsed.ok) throw new Error('invalid');
    const copy = JSON.parse(JSON.stringify(parsed.value)) as Definition;
    expect(Object.isFrozen(copy.nodes)).toBe(false);
    compileWorkflow(copy);
    expect(Object.isFrozen(copy.nodes)).toBe(true);
    expect(Object.isFrozen(copy.nodes[1])).toBe(true);
  });
});
