import { parseDuration } from '@weft/core';

/**
 * Time that moves only when a test says so. Give it to a MemoryStore (`new MemoryStore({ clock })`, or
 * `createTestEngine`, which does): every transaction then takes its time from it, so timers, retry
 * backoffs, waits and lease expiries fall due when the test advances it, not after real waiting.
 * (On PostgreSQL the database's own clock decides what is due.)
 */
export class ManualClock {
  private at: number;

  constructor(start: Date | string = '2030-01-01T00:00:00Z') {
    this.at = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.at);
  }

  /** Moves time forward by milliseconds or a duration such as `90s` or `2d`. */
  advance(by: number | string): Date {
    let step: number;
    if (typeof by === 'number') step = by;
    else {
      const parsed = parseDuration(by);
      if (!parsed.ok) throw new TypeError(parsed.error);
      step = parsed.value;
    }
    if (!(step >= 0)) throw new RangeError('time only moves forward: advance by a positive duration');
    this.at += step;
    return this.now();
  }
}
