import { RunCancelledError, RunFailedError, RunWaitTimeoutError } from './run-errors.js';
import type { HistoryEvent, Json, Run } from './types.js';

/** How long to wait for a run, and how to stop waiting. */
export interface WaitOptions {
  /** Gives up with `RunWaitTimeoutError` after this long (default: waits as long as the run takes). */
  readonly timeoutMs?: number;
  /** Stops waiting (rejecting with the signal's reason); the run goes on. */
  readonly signal?: AbortSignal;
}

/** What waiting needs of the client. */
export interface RunReader {
  getRun(id: string): Promise<Run>;
  streamHistory(id: string, options: { signal?: AbortSignal }): AsyncGenerator<HistoryEvent>;
}

/** The longest pause between two reads of the run when its event stream is silent or down. */
const MAX_PAUSE_MS = 5000;

/**
 * Waits until the run finishes and returns it completed, or throws `RunFailedError`,
 * `RunCancelledError` (cancelled or terminated) or `RunWaitTimeoutError`. The run's event stream
 * (Server-Sent Events) wakes the wait when something happens; the run is also read again with a growing
 * pause (up to 5 s), so a broken stream only makes the wait slower.
 */
export async function waitForRun(client: RunReader, id: string, options: WaitOptions = {}): Promise<Run> {
  const started = Date.now();
  const deadline = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : started + options.timeoutMs;
  const stop = new AbortController();
  const external = options.signal;
  const onAbort = () => stop.abort();
  external?.addEventListener('abort', onAbort, { once: true });
  let news = false;
  const waker: { wake: (() => void) | null } = { wake: null };
  const watching = (async () => {
    try {
      for await (const _event of client.streamHistory(id, { signal: stop.signal })) {
        news = true;
        waker.wake?.();
      }
    } catch {
      // No stream (an old server, a proxy that buffers): the pauses below still find the end.
    }
  })();
  try {
    for (let pause = 100; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
      external?.throwIfAborted();
      news = false;
      const run = await client.getRun(id);
      if (run.status === 'completed') return run;
      if (run.status === 'failed') throw new RunFailedError(run);
      if (run.status === 'cancelled' || run.status === 'terminated') throw new RunCancelledError(run);
      const left = deadline - Date.now();
      if (left <= 0) throw new RunWaitTimeoutError(id, run.status, options.timeoutMs ?? 0);
      if (!news)
        await sleep(Math.min(pause, left), stop.signal, (w) => {
          waker.wake = w;
        });
      waker.wake = null;
    }
  } finally {
    external?.removeEventListener('abort', onAbort);
    stop.abort();
    await watching;
  }
}

/** The output of a completed run (null when it has none). */
export function outputOf(run: Run): Json {
  return run.output ?? null;
}

/** Sleeps `ms`, or less when woken through `setWake` or when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal, setWake: (wake: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    setWake(done);
  });
}
