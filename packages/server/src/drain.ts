import type { FastifyInstance } from 'fastify';

/** Tells long-lived requests (worker polls) that the server is stopping, so they answer at once. */
export interface Drain {
  /** Aborted when the server starts to close. */
  readonly signal: AbortSignal;
  /** True once the server has started to close. */
  readonly draining: boolean;
}

/**
 * Makes closing the app a drain: from the moment `app.close()` is called every new request (on a keep-alive
 * connection: new connections are no longer accepted) is answered 503 `shutting_down` with
 * `Connection: close`, and `signal` is aborted so that waiting polls answer at once with what they hold.
 * Requests already running carry on (their answers close the connection), and `app.close()` resolves once
 * they have answered. Installed first,
 * so that the 503 comes before authentication and before any route's work.
 */
export function installDrain(app: FastifyInstance): Drain {
  const abort = new AbortController();
  app.addHook('preClose', async () => {
    abort.abort();
  });
  // Callback-style hooks: every request passes through them, and an async hook costs each request a promise
  // and a microtask turn for a check that is nearly always false.
  app.addHook('onRequest', (_request, reply, done) => {
    if (!abort.signal.aborted) return done();
    reply.header('connection', 'close');
    reply.status(503).send({
      error: {
        code: 'shutting_down',
        message: 'this server is stopping: send the request again (to another server, or once it is back)',
      },
    });
  });
  // Answers given while draining (polls, requests that were in flight) end their connection, so that no
  // idle keep-alive connection holds the close open.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (abort.signal.aborted) reply.header('connection', 'close');
    done(null, payload);
  });
  return {
    signal: abort.signal,
    get draining() {
      return abort.signal.aborted;
    },
  };
}
