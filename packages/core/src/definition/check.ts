import { err, ok, type Result } from '../result.js';
import { allNodes } from './containers.js';
import { isSystemTaskType } from './http-request.js';
import { type DefinitionProblem, formatProblem } from './problems.js';
import type { Definition } from './types.js';
import { validateDefinition } from './validate.js';

/** Why a definition cannot run: every problem found, and a message listing them. */
export interface DefinitionCheckFailure {
  readonly code: 'invalid_definition';
  readonly message: string;
  readonly problems: readonly DefinitionProblem[];
}

/** What else a definition is checked against. */
export interface CheckOptions {
  /**
   * The task types someone can run (the embedded engine's handlers): a task or compensation of any other
   * type is a problem. Absent: task types are not checked (external workers may run anything).
   */
  readonly taskTypes?: ReadonlySet<string>;
}

/**
 * Checks a definition as a result value: ok, or every problem (an empty graph, duplicate ids, unknown or
 * self dependencies, cycles, bad expressions, and with `taskTypes` every task type nobody handles).
 */
export function checkDefinition(
  definition: Definition,
  options: CheckOptions = {},
): Result<Definition, DefinitionCheckFailure> {
  const problems = [...validateDefinition(definition)];
  if (options.taskTypes) problems.push(...unhandledTaskTypes(definition, options.taskTypes));
  if (problems.length === 0) return ok(definition);
  const lines = problems.map(formatProblem);
  return err({
    code: 'invalid_definition',
    message: `workflow "${definition.name}" has ${lines.length} problem(s):\n${lines.join('\n')}`,
    problems,
  });
}

function unhandledTaskTypes(definition: Definition, known: ReadonlySet<string>): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  const check = (type: string, node: { id: string; line: number }, path: string) => {
    if (known.has(type) || isSystemTaskType(type)) return;
    problems.push({
      line: node.line,
      node: node.id,
      path,
      message: `${path}: no handler is registered for task type "${type}"; register one, or remove the node`,
    });
  };
  for (const { node } of allNodes(definition.nodes)) {
    if (node.kind !== 'task') continue;
    check(node.taskType, node, 'task_type');
    if (node.compensate) check(node.compensate.taskType, node, 'compensate.task_type');
  }
  return problems;
}
