import { pino } from 'pino';
import pretty from 'pino-pretty';
import { requestIdMixin } from './request-log.js';

/** How a server writes its log: JSON lines (for collectors), or readable lines for a terminal. */
export type LogFormat = 'json' | 'pretty';

/**
 * The server's pino logger at `level`, on standard output. `pretty` writes one readable, coloured line per
 * entry (pino-pretty, in this process: nothing to pipe through), for `weft dev` on a terminal.
 */
export function serverLogger(level: string, format: LogFormat = 'json'): pino.Logger {
  const options = { level, base: { service: 'weft' }, mixin: requestIdMixin };
  if (format === 'json') return pino(options);
  return pino(
    options,
    pretty({
      colorize: process.stdout.isTTY === true && !process.env.NO_COLOR,
      ignore: 'pid,hostname,service',
      sync: true,
    }),
  );
}
