/** Where a worker writes the problems it meets: `console` fits, and so does any logger with `warn`. */
export interface WorkerLogger {
  warn(message: string, ...rest: unknown[]): void;
}

/** What the worker keeps trying: while one keeps failing, only its first failure is logged. */
export type Retried = 'poll' | 'report' | 'heartbeat' | 'connect' | 'logs';

/**
 * Problems the worker recovers from: each goes to `onProblem` (when given) and to the logger (console
 * by default, nothing with `null`). A request that keeps failing is logged once, with a second line when
 * it works again, so a worker whose server is down does not fill its log.
 */
export class Problems {
  private readonly failing = new Set<Retried>();

  constructor(
    private readonly prefix: string,
    private readonly logger: WorkerLogger | null,
    private readonly onProblem?: (message: string, error?: unknown) => void,
  ) {}

  /** A problem; `retried` names the request that will be tried again. */
  report(message: string, error?: unknown, retried?: Retried): void {
    this.onProblem?.(message, error);
    if (retried) {
      if (this.failing.has(retried)) return;
      this.failing.add(retried);
    }
    const cause = error === undefined ? '' : `: ${error instanceof Error ? error.message : String(error)}`;
    const more = retried ? ' (further failures are not logged until it works again)' : '';
    this.logger?.warn(`${this.prefix} ${message}${cause}${more}`);
  }

  /** The request `retried` worked: a failure of it is logged again. */
  ok(retried: Retried): void {
    if (!this.failing.delete(retried)) return;
    this.logger?.warn(`${this.prefix} ${retried} works again`);
  }
}
