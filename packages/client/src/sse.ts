/** One Server-Sent Event. */
export interface SseMessage {
  /** The `id:` of the event, or of the last event that had one. */
  readonly id: string | null;
  readonly event: string;
  readonly data: string;
}

/**
 * Parses a Server-Sent Events stream as it arrives, chunk by chunk (text/event-stream, as browsers do).
 * An event is given out only once its terminating blank line has arrived, so an event cut off by a
 * dropped connection is never half-read: the client resumes from the last complete one.
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  /** Set at construction to resume: the id sent as Last-Event-ID. */
  constructor(lastId: string | null = null) {
    this.lastId = lastId;
    this.pendingId = lastId;
  }
  private event = '';
  private sawCr = false;
  /** The id of the event being read; it counts only once that event is complete. */
  private pendingId: string | null = null;
  /** The id of the last complete event (the value to send as Last-Event-ID when reconnecting). */
  lastId: string | null = null;
  /** The reconnection delay the server asked for, in milliseconds. */
  retry: number | null = null;

  /** Feeds decoded text; returns the events it completed. */
  push(text: string): SseMessage[] {
    const out: SseMessage[] = [];
    let input = text;
    // A CR at the end of the previous chunk already ended a line; a LF right after it is part of it.
    if (this.sawCr && input.startsWith('\n')) input = input.slice(1);
    this.sawCr = false;
    this.buffer += input;
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (!match) break;
      if (match[0] === '\r' && match.index === this.buffer.length - 1) this.sawCr = true;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const message = this.line(line);
      if (message) out.push(message);
    }
    return out;
  }

  private line(line: string): SseMessage | null {
    if (line === '') {
      this.lastId = this.pendingId;
      if (this.data.length === 0) {
        this.event = '';
        return null;
      }
      const message = { id: this.lastId, event: this.event || 'message', data: this.data.join('\n') };
      this.data = [];
      this.event = '';
      return message;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\u0000')) this.pendingId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
    }
    return null;
  }
}
