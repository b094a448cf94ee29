import { compileSchema } from '../schema.js';
import type { DefinitionProblem } from './problems.js';
import type { Definition } from './types.js';

/** Checks human nodes: a form that compiles as a JSON Schema (deadline targets are checked as edges). */
export function validateHumanNodes(def: Definition): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  for (const [index, node] of def.nodes.entries()) {
    if (node.kind !== 'human') continue;
    if (node.form) {
      const schema = compileSchema(node.form);
      if (!schema.ok)
        problems.push({
          line: node.line,
          node: node.id,
          path: `nodes[${index}].form`,
          message: `nodes[${index}].form is not a valid JSON Schema: ${schema.error}`,
        });
    }
  }
  return problems;
}
