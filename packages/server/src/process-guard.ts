import type { Logger } from 'pino';

/**
 * Keeps a server process alive through an error nothing handled. Node ends the process on an unhandled
 * rejection or an uncaught exception; for a server holding many runs' work that turns one bug into an
 * outage for everyone. The guard logs each one with its stack and counts it (`weft_unhandled_errors_total`
 * at /metrics), so it is seen and fixed, and the process keeps serving.
 *
 * Only a server's own process installs it (`weft server`, `weft dev`): a program that embeds the server
 * keeps its own policy, and the test suite keeps failing on any such error.
 */

let unhandled = 0;
let installs = 0;
let log: Logger | null = null;

/** How many unhandled rejections and uncaught exceptions the guard has caught in this process. */
export function unhandledErrorCount(): number {
  return unhandled;
}

function onRejection(reason: unknown): void {
  unhandled++;
  log?.error(
    { err: reason },
    'unhandled promise rejection (the server keeps running; this is a bug: report it)',
  );
}

function onException(error: Error, origin: string): void {
  unhandled++;
  log?.error(
    { err: error, origin },
    'uncaught exception (the server keeps running; this is a bug: report it)',
  );
}

/** Installs the guard on this process, logging to `logger`; the function it returns removes it. */
export function guardProcess(logger: Logger): () => void {
  log = logger;
  if (installs++ === 0) {
    process.on('unhandledRejection', onRejection);
    process.on('uncaughtException', onException);
  }
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    if (--installs === 0) {
      process.off('unhandledRejection', onRejection);
      process.off('uncaughtException', onException);
      log = null;
    }
  };
}
