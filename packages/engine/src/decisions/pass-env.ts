import type { Extensions } from '../extensions/extensions.js';
import type { Logger } from '../support/logger.js';
import type { HumanTaskSinks } from './human-task-events.js';

/**
 * What a pass needs besides the store: the extensions to report to after commit, a logger, and where human
 * task changes are announced.
 */
export interface PassEnv {
  readonly extensions: Extensions;
  readonly logger: Logger;
  /** Which sinks hear of human task changes, per namespace. */
  readonly humanTaskSinks?: HumanTaskSinks;
}
