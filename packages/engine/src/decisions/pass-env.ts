import type { Extensions } from '../extensions/extensions.js';
import type { Logger } from '../support/logger.js';

/** What a pass needs besides the store: the extensions to report to after commit, and a logger. */
export interface PassEnv {
  readonly extensions: Extensions;
  readonly logger: Logger;
}
