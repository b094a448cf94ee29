import type { Extensions } from '../extensions/extensions.js';
import type { Logger } from '../support/logger.js';
import type { EngineMeter } from '../support/meter.js';
import type { HumanTaskSinks } from './human-task-events.js';

/**
 * What a pass needs besides the store: the extensions to report to after commit, a logger, where human
 * task changes are announced, and the meter that counts the runs it starts and finishes.
 */
export interface PassEnv {
  readonly extensions: Extensions;
  readonly logger: Logger;
  /** Which sinks hear of human task changes, per namespace. */
  readonly humanTaskSinks?: HumanTaskSinks;
  readonly meter?: EngineMeter;
}
