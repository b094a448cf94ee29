import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

/** The header that carries a request's id, taken from the caller or made, and returned on every answer. */
export const REQUEST_ID_HEADER = 'x-request-id';

// A caller's id is kept only when it is short and plain: it goes into every log line of the request.
const USABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

// The id of the request whose work is running, for lines logged through loggers that are not the request's
// own (the engine's, the server's): everything a request's handler awaits runs inside it.
const running = new AsyncLocalStorage<string>();

/**
 * A pino `mixin` that adds `request_id` to a line logged while a request's work runs, through any logger
 * (the request's own child logger already carries it, and gets nothing more).
 */
export function requestIdMixin(_merge: object, _level: number, logger: Logger): object {
  const id = running.getStore();
  if (id === undefined || 'request_id' in logger.bindings()) return {};
  return { request_id: id };
}

/** The request's id: the caller's `x-request-id` when it is usable, else a fresh UUID. */
export function requestId(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && USABLE_ID.test(given) ? given : randomUUID();
}

/**
 * Returns the request id on every answer (streams included: it is set on the raw response before anything
 * is written), carries the id to every line logged during the request (with requestIdMixin in the logger),
 * and writes one access line per answered request: method, route pattern (never the URL: its
 * path and query can carry values), status, duration and the caller's key name. Bodies are never logged.
 */
export function installRequestLog(app: FastifyInstance): void {
  // Callback style: the rest of the request (hooks, handler, everything they await) runs inside `run`.
  app.addHook('onRequest', (request, reply, done) => {
    reply.raw.setHeader(REQUEST_ID_HEADER, request.id);
    running.run(request.id, done);
  });
  // Callback style, and nothing built when the access line would not be written (below `info`).
  app.addHook('onResponse', (request, reply, done) => {
    if (!infoEnabled(request.log)) return done();
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 10) / 10,
        caller: request.principal?.name ?? null,
      },
      'request',
    );
    done();
  });
}

/** Whether the logger writes `info` lines (Fastify's logger of a server without one writes nothing). */
function infoEnabled(log: FastifyBaseLogger): boolean {
  const enabled = (log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled;
  return enabled === undefined || enabled.call(log, 'info');
}
