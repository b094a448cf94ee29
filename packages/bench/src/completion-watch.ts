import type postgres from 'postgres';
import { now } from './timing-feed.js';

/** How often the watch looks, in milliseconds: with one round trip, the resolution of a burst's end. */
export const WATCH_INTERVAL_MS = 2;

/** Run statuses from which a run still moves (the complement of core's TERMINAL_RUN_STATUSES). */
const OPEN = ['running', 'paused', 'compensating'];

/**
 * Waits until no run of `namespace` is open in PostgreSQL, and returns when that was seen (wall-clock
 * milliseconds, the clock of the runs' start times). A burst's wall time ends there, when its last run is
 * committed completed, not at its last handler's end: the report that completes a run, its decision and
 * the commit all belong to the run. Called once every run of the burst is started (so each is in the
 * table) and with none of any earlier phase left open (each phase waits for its runs).
 *
 * It looks every WATCH_INTERVAL_MS: the end it returns is late by at most that and one round trip. Each
 * look is one index probe of the runs by status (runs_by_status) that stops at the first open run, so it
 * costs PostgreSQL about as much whatever the table's size, and nothing to the path measured but that.
 */
export async function whenAllRunsClosed(admin: postgres.Sql, namespace = 'default'): Promise<number> {
  const until = Date.now() + 300_000;
  for (;;) {
    const [row] = await admin<{ open: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM weft.runs WHERE namespace = ${namespace} AND status = ANY(${OPEN}::text[])) AS open`;
    const seen = now();
    if (!row!.open) return seen;
    if (Date.now() > until) throw new Error('runs were still open 5 minutes after the burst started');
    await new Promise((r) => setTimeout(r, WATCH_INTERVAL_MS));
  }
}
