import type { Json } from '@weft/core';
import type { TaskLogLevel, TaskLogLimits, TaskLogLine, TaskLogUsage } from './task-log-store.js';

/** A line ready to keep, with its size counted. */
export interface FittedLine {
  readonly level: TaskLogLevel;
  readonly message: string;
  readonly fields: Json | null;
  readonly at: Date | null;
  readonly bytes: number;
}

/** What to write for one append: the lines that fit, the usage after them, and how many were dropped. */
export interface Fitted {
  readonly rows: readonly FittedLine[];
  readonly usage: TaskLogUsage;
  readonly dropped: number;
}

/** The line written once when an attempt's log passes its bounds; nothing after it is kept. */
export function truncationMarker(limits: TaskLogLimits): string {
  const mib = (limits.bytesPerAttempt / (1024 * 1024)).toFixed(
    limits.bytesPerAttempt % (1024 * 1024) ? 2 : 0,
  );
  return `log truncated: this attempt wrote more than ${limits.linesPerAttempt} lines or ${mib} MiB; later lines were dropped`;
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Cuts a message to `max` bytes (on a character boundary), saying how much was cut. */
function cut(message: string, max: number): string {
  const bytes = Buffer.from(message, 'utf8');
  if (bytes.length <= max) return message;
  const note = ` … [${bytes.length - max} bytes cut]`;
  // Decoding a prefix may end in half a character: drop the replacement character it leaves.
  const head = bytes
    .subarray(0, Math.max(0, max - byteLength(note)))
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return head + note;
}

/** One line as it will be kept: its message cut to the line bound (fields too large are dropped, said so). */
function fitLine(line: TaskLogLine, limits: TaskLogLimits): FittedLine {
  let fields: Json | null = line.fields ?? null;
  let fieldBytes = fields === null ? 0 : byteLength(JSON.stringify(fields));
  let message = line.message;
  if (fieldBytes > limits.lineBytes / 2) {
    message = `${message} [fields of ${fieldBytes} bytes dropped]`;
    fields = null;
    fieldBytes = 0;
  }
  message = cut(message, limits.lineBytes - fieldBytes);
  return { level: line.level, message, fields, at: line.at ?? null, bytes: byteLength(message) + fieldBytes };
}

/**
 * Fits new lines into what an attempt has kept (pure: the store calls it under the attempt's row lock).
 * Lines are kept in order while they fit; the first that does not fit is replaced by one truncation
 * marker, and every line after the marker, in this append or a later one, is dropped.
 */
export function fitLines(usage: TaskLogUsage, lines: readonly TaskLogLine[], limits: TaskLogLimits): Fitted {
  if (usage.truncated) return { rows: [], usage, dropped: lines.length };
  const rows: FittedLine[] = [];
  let { lines: count, bytes } = usage;
  for (const [i, line] of lines.entries()) {
    const fitted = fitLine(line, limits);
    if (count + 1 > limits.linesPerAttempt || bytes + fitted.bytes > limits.bytesPerAttempt) {
      const message = truncationMarker(limits);
      rows.push({ level: 'warn', message, fields: null, at: null, bytes: byteLength(message) });
      return { rows, usage: { lines: count, bytes, truncated: true }, dropped: lines.length - i };
    }
    rows.push(fitted);
    count += 1;
    bytes += fitted.bytes;
  }
  return { rows, usage: { lines: count, bytes, truncated: false }, dropped: 0 };
}
