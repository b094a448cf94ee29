import type { MappingSource } from '../expr/mapping.js';
import { httpRequestSource } from './http-request.js';
import type { NodeDef } from './node-types.js';

/**
 * One expression-bearing field of a node. `reads` says which nodes it may read: `before` for fields
 * evaluated when the node is reached (nodes that run before it, in its own scope or around its
 * container); `body` for fields evaluated over a finished pass or item of a loop or map (the body's nodes,
 * and the nodes that run before the container); `self` for a compensation's input, evaluated once the node
 * completed (the node itself, and what `before` may read).
 */
export interface NodeMapping {
  /** The field as written, used in problems and to look the compiled mapping up: `input`, `body.output`. */
  readonly field: string;
  readonly source: MappingSource;
  readonly reads: 'before' | 'body' | 'self';
}

/** Every mapping or expression a node carries, by field. */
export function nodeMappings(node: NodeDef): NodeMapping[] {
  const before = (field: string, source: MappingSource | null): NodeMapping[] =>
    source === null ? [] : [{ field, source, reads: 'before' }];
  const body = (field: string, source: MappingSource | null): NodeMapping[] =>
    source === null ? [] : [{ field, source, reads: 'body' }];
  switch (node.kind) {
    case 'task':
      return [
        ...before('input', node.input),
        ...before('limit_key', node.limitKey ?? null),
        ...(node.compensate?.input != null
          ? [{ field: 'compensate.input', source: node.compensate.input, reads: 'self' as const }]
          : []),
      ];
    case 'human':
      return before('input', node.input);
    case 'noop':
      return [];
    case 'switch':
      return before('expression', node.expression);
    case 'wait':
      return before('until', node.until);
    case 'wait_for_event':
      return before('correlation', node.correlation);
    case 'loop':
      return [...body('while', node.while), ...body('body.output', node.body.output)];
    case 'map':
      return [...before('items', node.items), ...body('body.output', node.body.output)];
    case 'transform':
      return [
        ...before('value', node.value),
        ...before('vars', node.vars),
        ...before('attributes', node.attributes),
      ];
    case 'terminate':
      return [...before('output', node.output), ...before('reason', node.reason)];
    case 'sub_workflow':
    case 'start_workflow':
      return before('input', node.input);
    case 'event':
      return before('payload', node.payload);
    case 'http':
      return before('request', httpRequestSource(node));
  }
}
