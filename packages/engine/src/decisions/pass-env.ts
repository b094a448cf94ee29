import type { Extensions } from '../extensions/extensions.js';
import type { Logger } from '../support/logger.js';
import type { EngineMeter } from '../support/meter.js';

/**
 * What a pass needs besides the store: the extensions to report to after commit, a logger, and the meter
 * that counts the runs it starts and finishes.
 */
export interface PassEnv {
  readonly extensions: Extensions;
  readonly logger: Logger;
  readonly meter?: EngineMeter;
}
