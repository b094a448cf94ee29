import { checkAttributes, checkSchema, type RunAttributes, WeftError, type Workflow } from '@weft/core';
import type { DefinitionRecord, StartRequest } from '../store/records.js';

/** Refuses an input that does not match the definition's input schema. */
export function checkInput(
  workflow: Workflow,
  record: DefinitionRecord,
  request: Pick<StartRequest, 'input'>,
): void {
  if (!workflow.definition.inputSchema) return;
  const check = checkSchema(workflow.definition.inputSchema, request.input);
  if (!check.ok) {
    throw new WeftError(
      'invalid_input',
      `the input does not match the input_schema of ${record.name} v${record.version}: ${check.error}`,
      400,
    );
  }
}

/** Search attributes of a start, checked where they enter; a bad one fails this start alone with a 400. */
export function attributesOf(value: unknown): RunAttributes {
  const checked = checkAttributes(value);
  if (!checked.ok) throw new WeftError('bad_attributes', checked.error, 400);
  return checked.value;
}
