import type { Json } from '@weft/core';
import type { HeldAttempt, Logger, TaskLogLevel, TaskLogLine, TaskLogService } from '@weft/engine';

/** What a handler logs with, as `ctx.log`: `ctx.log.info('charged the card', { amount: 5 })`. */
export interface HandlerLog {
  debug(message: string, fields?: { readonly [key: string]: Json }): void;
  info(message: string, fields?: { readonly [key: string]: Json }): void;
  warn(message: string, fields?: { readonly [key: string]: Json }): void;
  error(message: string, fields?: { readonly [key: string]: Json }): void;
}

/** Buffered lines are written this long after the first of them, or before the attempt's report. */
const FLUSH_MS = 1000;
/** Lines one write carries (the service's bound). */
const MAX_PER_WRITE = 500;

/** Whether the engine said it keeps no task logs: said once per process, then lines are dropped quietly. */
let unavailableSaid = false;

/**
 * One attempt's log in the embedded engine: lines are buffered and written through the engine's task log
 * service, fenced by the lease like a report (a lost lease drops them), before the attempt's report.
 */
export class AttemptLog {
  readonly log: HandlerLog;
  private buffer: TaskLogLine[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private done = false;

  constructor(
    private readonly logs: TaskLogService,
    private readonly namespace: string,
    private readonly held: HeldAttempt,
    private readonly logger: Logger,
  ) {
    const at = (level: TaskLogLevel) => (message: string, fields?: { readonly [key: string]: Json }) =>
      this.add({ level, message: String(message), at: new Date(), ...(fields ? { fields } : {}) });
    this.log = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  }

  private add(line: TaskLogLine): void {
    if (this.done) return;
    this.buffer.push(line);
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  private flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const lines = this.buffer;
    this.buffer = [];
    const previous = this.writing ?? Promise.resolve();
    const writing = previous.then(() => this.write(lines));
    this.writing = writing;
    void writing.then(() => {
      if (this.writing === writing) this.writing = null;
    });
    return writing;
  }

  private async write(lines: readonly TaskLogLine[]): Promise<void> {
    for (let from = 0; from < lines.length && !this.done; from += MAX_PER_WRITE) {
      try {
        await this.logs.append(this.namespace, this.held, lines.slice(from, from + MAX_PER_WRITE));
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (code === 'lease_lost') this.done = true;
        else if (code === 'logs_unavailable') {
          this.done = true;
          if (!unavailableSaid) this.logger.warn({}, `ctx.log lines are dropped: ${(e as Error).message}`);
          unavailableSaid = true;
        } else this.logger.warn({ error: String(e), taskId: this.held.taskId }, 'could not write log lines');
      }
    }
  }

  /**
   * The handler finished: writes what is left, and nothing after. Null when nothing is left (an attempt
   * that logged nothing reports at once).
   */
  close(): Promise<void> | null {
    const pending = this.buffer.length > 0 ? this.flush() : this.writing;
    if (!pending) {
      this.done = true;
      if (this.timer) clearTimeout(this.timer);
      return null;
    }
    return pending.then(() => {
      this.done = true;
    });
  }
}
