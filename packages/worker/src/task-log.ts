import {
  type Json,
  type TaskLogHolder,
  type TaskLogLevel,
  type TaskLogWrite,
  type TaskProtocolClient,
  WeftApiError,
} from '@weft/client/tasks';
import type { Problems } from './problems.js';

/** What a handler logs with, as `ctx.log`: `ctx.log.info('charged the card', { amount: 5 })`. */
export interface TaskLogger {
  debug(message: string, fields?: { readonly [key: string]: unknown }): void;
  info(message: string, fields?: { readonly [key: string]: unknown }): void;
  warn(message: string, fields?: { readonly [key: string]: unknown }): void;
  error(message: string, fields?: { readonly [key: string]: unknown }): void;
}

/** Buffered lines are sent this long after the first of them, or before the report. */
const FLUSH_MS = 1000;
/** Lines one request carries (the server's bound). */
const MAX_PER_REQUEST = 500;
/** Lines kept waiting while the server cannot be reached; later ones are counted and dropped. */
const MAX_BUFFERED = 2000;
/** The longest message the server takes; a longer one is cut here rather than refused there. */
const MAX_MESSAGE_CHARS = 64 * 1024;

/** Fields as JSON, or none (said in the message) when they cannot be written as JSON. */
function jsonFields(fields: { readonly [key: string]: unknown }): {
  fields?: { [key: string]: Json };
  note: string;
} {
  try {
    const copy = JSON.parse(JSON.stringify(fields)) as unknown;
    if (copy && typeof copy === 'object' && !Array.isArray(copy))
      return { fields: copy as { [key: string]: Json }, note: '' };
  } catch {
    // a cycle, a BigInt: said below
  }
  return { note: ' [fields dropped: not a JSON object]' };
}

/**
 * One attempt's log: lines are buffered and sent in batches (a second after the first line, and before the
 * attempt's report), one request at a time. A task that logs nothing sends nothing. Once the server answers
 * `lease_lost`, the attempt no longer holds its lease: what is buffered is dropped and later lines too.
 */
export class TaskLog {
  readonly logger: TaskLogger;
  private buffer: TaskLogWrite[] = [];
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> | null = null;
  private closing = false;
  private lost = false;
  private overflow = 0;

  constructor(
    private readonly holder: TaskLogHolder,
    private readonly client: () => TaskProtocolClient,
    private readonly problems: Problems,
  ) {
    const at = (level: TaskLogLevel) => (message: string, fields?: { readonly [key: string]: unknown }) =>
      this.add(level, message, fields);
    this.logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  }

  private add(level: TaskLogLevel, message: string, fields?: { readonly [key: string]: unknown }): void {
    if (this.lost || this.closing) return;
    if (this.buffer.length >= MAX_BUFFERED) {
      this.overflow++;
      return;
    }
    const json = fields === undefined ? { note: '' } : jsonFields(fields);
    const text = `${String(message)}${json.note}`.slice(0, MAX_MESSAGE_CHARS);
    this.buffer.push({
      level,
      message: text,
      at: new Date().toISOString(),
      ...(json.fields ? { fields: json.fields } : {}),
    });
    if (!this.timer && !this.sending) this.arm();
  }

  private arm(): void {
    this.timer = setTimeout(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /** Sends what is buffered; resolves when this round of sending is over. */
  private flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.sending ??= this.send().finally(() => {
      this.sending = null;
      if (this.buffer.length > 0 && !this.closing && !this.lost) this.arm();
    });
    return this.sending;
  }

  private async send(): Promise<void> {
    if (this.overflow > 0) {
      this.buffer.push({
        level: 'warn',
        message: `${this.overflow} log lines were dropped by the worker: its buffer was full`,
      });
      this.overflow = 0;
    }
    while (this.buffer.length > 0 && !this.lost) {
      const batch = this.buffer.splice(0, MAX_PER_REQUEST);
      try {
        await this.client().writeLogs(this.holder, batch);
        this.problems.ok('logs');
      } catch (e) {
        if (e instanceof WeftApiError && e.code === 'lease_lost') {
          this.lost = true;
          this.buffer = [];
          return;
        }
        if (e instanceof WeftApiError && e.status >= 400 && e.status < 500) {
          this.problems.report(`${batch.length} log line(s) of task ${this.holder.task_id} were refused`, e);
          continue;
        }
        // Unreachable, or a server error: kept for the next round.
        this.buffer = [...batch, ...this.buffer];
        this.problems.report('sending log lines failed; will try again', e, 'logs');
        return;
      }
    }
  }

  /**
   * The handler finished: sends what is left. Null when nothing is (the report goes at once); otherwise a
   * promise that settles once the lines are sent, or dropped when the server cannot take them now.
   */
  close(): Promise<void> | null {
    this.closing = true;
    if (this.buffer.length === 0 && this.overflow === 0 && !this.sending) {
      if (this.timer) clearTimeout(this.timer);
      return null;
    }
    return (async () => {
      await this.sending;
      if (this.buffer.length > 0 || this.overflow > 0) await this.flush();
      if (this.buffer.length > 0) {
        this.problems.report(
          `${this.buffer.length} log line(s) of task ${this.holder.task_id} could not be sent and were dropped`,
        );
        this.buffer = [];
      }
    })();
  }
}
