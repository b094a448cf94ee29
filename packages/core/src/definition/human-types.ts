import type { MappingSource } from '../expr/mapping.js';
import type { JsonObject } from '../json.js';
import type { NodeCommon } from './types.js';

/** A human node's deadline: after `afterMs` without an answer, the edges to `to` are taken instead. */
export interface HumanDeadline {
  readonly afterMs: number;
  /** Successors taken when the deadline passes (the others are skipped); empty: the run fails. */
  readonly to: readonly string[];
}

/**
 * A task for a person: it appears in the inbox of its namespace, someone claims it and completes it with
 * data that must match `form` (a JSON Schema). The data becomes the node's output.
 */
export interface HumanNode extends NodeCommon {
  readonly kind: 'human';
  readonly title: string;
  /** What the person is shown, computed like a task's input; by default the run input. */
  readonly input: MappingSource | null;
  readonly form: JsonObject | null;
  /** Who the task is meant for (people or groups): for routing and filtering, not access control. */
  readonly assignees: readonly string[];
  readonly deadline: HumanDeadline | null;
}
