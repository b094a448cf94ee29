import type { Engine } from '@weft/engine';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { type AuthSettings, installAuth } from './auth/authenticate.js';
import { installRateLimit, type RateLimit } from './auth/rate-limit.js';
import { consoleAssetsDir, isConsoleFile, isConsolePage, sendConsoleIndex, serveConsole } from './console.js';
import { installCors } from './cors.js';
import { installDrain } from './drain.js';
import { installErrorHandler } from './errors.js';
import { type DatabaseProbe, healthRoutes } from './health.js';
import { clientErrorHandler, frameworkErrors, installUrlLimit, MAX_PARAM_LENGTH } from './http-limits.js';
import { installInputGuard } from './input-guard.js';
import { createServerMetrics, installRequestMetrics, metricsRoute } from './metrics/metrics-route.js';
import { openApiRoutes } from './openapi.js';
import { installRequestLog, requestId } from './request-log.js';
import { installRequestTracing } from './request-tracing.js';
import { recordRoutes } from './route-table.js';
import { auditRoutes } from './routes/audit.js';
import { bulkRoutes } from './routes/bulk.js';
import { deadLetterRoutes } from './routes/dead-letters.js';
import { definitionRoutes } from './routes/definitions.js';
import { emitRoutes } from './routes/emit.js';
import { eventRoutes } from './routes/events.js';
import { forkRoutes } from './routes/forks.js';
import { inboxRoutes } from './routes/inbox.js';
import { keyRoutes } from './routes/keys.js';
import { limitRoutes } from './routes/limits.js';
import { operatorActionRoutes } from './routes/operator-actions.js';
import { operatorReadRoutes } from './routes/operator-reads.js';
import { retentionRoutes } from './routes/retention.js';
import { runListRoutes } from './routes/run-list.js';
import { runMoveRoutes } from './routes/run-moves.js';
import { runRoutes } from './routes/runs.js';
import { scheduleRoutes, sweeperRoutes } from './routes/schedules.js';
import { secretRoutes } from './routes/secrets.js';
import { signalRoutes } from './routes/signals.js';
import { sweeperRepairRoutes } from './routes/sweeper-repairs.js';
import { type DispatchInfo, taskDispatchRoutes } from './routes/task-dispatch.js';
import { taskLogRoutes } from './routes/task-logs.js';
import { taskRoutes } from './routes/tasks.js';
import { scopeRunRoutes } from './run-scope.js';
import type { ServerTls } from './tls.js';
import { WorkerSightings } from './worker-sightings.js';

/** Options for the HTTP app. */
export interface AppOptions {
  readonly engine: Engine;
  /** Web origins whose pages may call the API from a browser (CORS); none by default. */
  readonly corsOrigins?: readonly string[];
  /** Requests per key and window; none when absent. */
  readonly rateLimit?: RateLimit | null;
  /** How requests are authenticated, and where keys are kept. */
  readonly auth: AuthSettings;
  /** A pino logger for request logs; none when absent. */
  readonly logger?: FastifyBaseLogger;
  /** How often a live history stream looks for events written by other servers (default 500 ms). */
  readonly historyPollMs?: number;
  /** How tasks reach workers (told to workers by `GET /v1/tasks/dispatch`); the table queue by default. */
  readonly dispatch?: DispatchInfo;
  /**
   * The web console's built assets, served at `/`: a folder, `null` for none, or by default the one
   * `npm run build` made (none when it has not been built).
   */
  readonly console?: string | null;
  /** The database check of `/readyz`; without one, readiness looks at the background loops only. */
  readonly databaseProbe?: DatabaseProbe;
  /** How long a background loop's round may run before `/readyz` calls it stuck (default 120 s). */
  readonly backgroundStallMs?: number;
  /** Serves HTTPS with this certificate (and asks clients for one when `ca` is given); see serverTls. */
  readonly https?: ServerTls;
}

/** Weft's HTTP API: definitions, runs, history and the worker protocol, as JSON. */
export function buildApp(options: AppOptions): FastifyInstance {
  // An HTTPS server has the same routes and handlers; Fastify types it apart only by its server.
  const app = (Fastify as (o: object) => FastifyInstance)({
    ...(options.https ? { https: options.https } : {}),
    ...(options.logger
      ? {
          loggerInstance: options.logger,
          // One access line per request instead of Fastify's two (installRequestLog).
          logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
        }
      : { logger: false }),
    // Room for the largest payload the engine accepts (it refuses larger ones with a clear error).
    bodyLimit: Math.max(8 * 1024 * 1024, options.engine.context.config.maxPayloadBytes + 1024 * 1024),
    keepAliveTimeout: 65_000,
    // Long polls wait up to 60 s.
    requestTimeout: 120_000,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors,
    clientErrorHandler,
    // Closing answers new requests with Weft's own 503 (installDrain), not Fastify's.
    return503OnClosing: false,
    // The caller's x-request-id when usable, else a new one; on every log line of the request.
    requestIdHeader: false,
    genReqId: requestId,
  });
  installRequestLog(app);
  const drain = installDrain(app);
  recordRoutes(app);
  const metrics = createServerMetrics(options.engine, options.logger ?? null);
  installRequestMetrics(app, metrics);
  installRequestTracing(app);
  installUrlLimit(app);
  // YAML only as application/yaml: like JSON, a type a web page cannot send without a CORS preflight, so
  // a page of another origin cannot deploy or validate (text/plain and forms are refused with 415).
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/yaml', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  installCors(app, options.corsOrigins ?? []);
  installAuth(app, options.auth, isConsoleFile);
  if (options.rateLimit) installRateLimit(app, options.rateLimit);
  const consoleDir = options.console === undefined ? consoleAssetsDir() : options.console;
  if (consoleDir) serveConsole(app, consoleDir);
  installErrorHandler(app, {
    page: (request, reply) => {
      if (!isConsolePage(request)) return null;
      if (consoleDir) return sendConsoleIndex(reply);
      return reply.status(404).send({
        error: {
          code: 'console_not_built',
          message: 'the web console is not built: run `npm run build`, then start the server again',
        },
      });
    },
  });
  installInputGuard(app);
  openApiRoutes(app);
  // The routes go in a plugin, so that they are added once the OpenAPI plugin listens for them.
  app.register(async (api) => {
    healthRoutes(api, options.engine, options.databaseProbe, options.backgroundStallMs);
    scopeRunRoutes(api, options.engine);
    definitionRoutes(api, options.engine);
    const sightings = new WorkerSightings(options.engine.context.store, options.logger);
    api.addHook('onClose', () => sightings.close());
    runRoutes(api, options.engine);
    runListRoutes(api, options.engine);
    operatorReadRoutes(api, options.engine, sightings);
    operatorActionRoutes(api, options.engine);
    bulkRoutes(api, options.engine);
    runMoveRoutes(api, options.engine);
    forkRoutes(api, options.engine);
    eventRoutes(api, options.engine, options.historyPollMs);
    signalRoutes(api, options.engine);
    emitRoutes(api, options.engine);
    taskRoutes(api, options.engine, sightings, drain.signal);
    taskLogRoutes(api, options.engine);
    metricsRoute(api, metrics);
    limitRoutes(api, options.engine);
    secretRoutes(api, options.engine);
    inboxRoutes(api, options.engine);
    scheduleRoutes(api, options.engine);
    sweeperRoutes(api, options.engine);
    sweeperRepairRoutes(api, options.engine);
    retentionRoutes(api, options.engine);
    taskDispatchRoutes(api, options.engine, options.dispatch ?? { kind: 'table' }, sightings);
    deadLetterRoutes(api, options.engine);
    keyRoutes(api, options.auth.keys);
    auditRoutes(api, options.auth.keys);
  });
  return app;
}
