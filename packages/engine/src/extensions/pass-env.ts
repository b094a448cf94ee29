import type { Logger } from '../logger.js';
import type { Extensions } from './extensions.js';

/** What a pass needs besides the store: the extensions to report to after commit, and a logger. */
export interface PassEnv {
  readonly extensions: Extensions;
  readonly logger: Logger;
}
