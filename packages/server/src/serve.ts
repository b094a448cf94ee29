import {
  DEFAULT_TASK_STREAM_PREFIX,
  humanTaskSinksOf,
  redisTaskDestination,
  type SinkConfig,
  sinkDestinations,
  sinksNamingSecrets,
} from '@weft/connectors';
import { WeftError } from '@weft/core';
import {
  type BlobStore,
  createOutbound,
  type Dispatcher,
  Engine,
  type EngineConfig,
  outboxDispatcher,
  SecretBox,
} from '@weft/engine';
import {
  checkMigrations,
  connect,
  migrate,
  PgApiKeys,
  PgSecretStore,
  PgStore,
  PgTaskLogStore,
} from '@weft/postgres';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { ensureBootstrapKey } from './auth/issue.js';
import type { RateLimit } from './auth/rate-limit.js';
import { databaseProbe } from './database-probe.js';
import { type LogFormat, serverLogger } from './logger.js';
import { guardProcess } from './process-guard.js';
import type { DispatchInfo } from './routes/task-dispatch.js';
import { type ServerTls, serverTls, type TlsFileSettings } from './tls.js';
import { type Environment, startTracing, type Tracing } from './tracing-sdk.js';

/** How to run a server. */
export interface ServeOptions {
  readonly databaseUrl: string;
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  /** Apply pending migrations before serving (default true). */
  readonly migrate?: boolean;
  /** Connections in the pool. */
  readonly poolSize?: number;
  readonly engine?: Partial<EngineConfig>;
  /** Log level; `silent` for none. */
  readonly logLevel?: string;
  /** JSON lines (the default), or `pretty`: readable lines for a terminal. */
  readonly logFormat?: LogFormat;
  /** Where large payloads go (a folder `.weft/blobs` by default). */
  readonly blobs?: BlobStore;
  /** Sinks that `event` nodes and status callbacks can name. */
  readonly sinks?: readonly SinkConfig[];
  /** How tasks reach workers: the queue table (default) or Redis streams fed by the outbox. */
  readonly dispatcher?: 'table' | 'redis';
  /** Redis, for the Redis dispatcher. */
  readonly redisUrl?: string;
  /** Signs status callbacks sent to URLs (`x-weft-signature`). */
  readonly webhookSecret?: string;
  /**
   * Hosts, addresses and CIDR ranges that `http` nodes, webhooks and status callbacks may reach although
   * they are loopback, private, link-local or cloud metadata (`WEFT_OUTBOUND_ALLOW`).
   */
  readonly outboundAllow?: string | readonly string[];
  /** Seals secrets (32 bytes, base64; `WEFT_SECRETS_KEY`); without it secrets cannot be set or used. */
  readonly secretsKey?: string;
  /** Earlier keys, to open secrets sealed before a rotation (`WEFT_SECRETS_OLD_KEYS`). */
  readonly secretsOldKeys?: readonly string[];
  /** Serve HTTPS from these files (`--tls-cert`, `--tls-key`, `--tls-client-ca` for mutual TLS). */
  readonly tls?: TlsFileSettings;
  /** The web console's assets folder, `null` for no console; by default the one `npm run build` made. */
  readonly console?: string | null;
  /**
   * Log and count (`weft_unhandled_errors_total`) unhandled rejections and uncaught exceptions instead of
   * letting Node end the process: for a process that is only this server (default false).
   */
  readonly guardProcess?: boolean;
  /** Authentication: API keys unless told otherwise. */
  readonly auth?: ServeAuth;
  /** Web origins whose pages may call the API from a browser (CORS); none by default. */
  readonly corsOrigins?: readonly string[];
  /** Requests per key and window (counted by each server); none by default. */
  readonly rateLimit?: RateLimit | null;
  /**
   * Starts OpenTelemetry tracing for the process when these variables ask for it (`OTEL_*`, see
   * startTracing); `weft server` passes its environment. None by default: a process embedding the server
   * may register its own SDK, whose tracer provider Weft's spans then use.
   */
  readonly tracing?: Environment;
}

/** How a server authenticates its callers. */
export interface ServeAuth {
  /**
   * `keys` (the default): every route but liveness, readiness and the console's files needs an API key.
   * `off`: no route does; allowed only when listening on a loopback address.
   */
  readonly mode?: 'keys' | 'off';
  /** A bearer token that may read /metrics without an API key. */
  readonly metricsToken?: string;
  /** An admin key to create at start-up when it is not there yet (the first key of an installation). */
  readonly bootstrapAdminKey?: string;
}

/** A running server. */
export interface RunningServer {
  readonly url: string;
  readonly app: FastifyInstance;
  readonly engine: Engine;
  readonly store: PgStore;
  close(): Promise<void>;
}

/** Connects to PostgreSQL, migrates, starts the engine's background loops and serves the HTTP API. */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const logger = serverLogger(options.logLevel ?? 'info', options.logFormat);
  const host = options.host ?? '127.0.0.1';
  const authMode = options.auth?.mode ?? 'keys';
  if (authMode === 'off') {
    if (!isLoopback(host))
      throw new WeftError(
        'bad_config',
        `authentication is off, so the server listens only on a loopback address (127.0.0.1 or ::1), not ${host}: turn authentication on to listen on ${host}`,
      );
    logger.warn('authentication is off: anyone who can reach this address can do anything; do not expose it');
  }
  // Statements are counted for weft_db_statements_total (the benchmark's statements per step) once the
  // engine exists; migrations and the first key before it are not.
  let stats: { statementsSent: number } | undefined;
  const sql = connect(options.databaseUrl, {
    max: options.poolSize ?? 20,
    applicationName: 'weft-server',
    onStatement: () => {
      if (stats) stats.statementsSent++;
    },
  });
  try {
    // Either way a database whose applied migration files have changed is refused (migration_changed).
    if (options.migrate ?? true)
      await migrate(sql, (m) => logger.info({ migration: m.id }, `applied migration ${m.name}`));
    else await checkMigrations(sql);
    if (options.auth?.bootstrapAdminKey)
      await ensureBootstrapKey(new PgApiKeys(sql), options.auth.bootstrapAdminKey);
  } catch (e) {
    await sql.end();
    throw e;
  }
  let outbound: ReturnType<typeof createOutbound>;
  let https: ServerTls | undefined;
  let tracing: Tracing | null = null;
  try {
    https = options.tls ? serverTls(options.tls) : undefined;
    tracing = options.tracing ? startTracing(options.tracing) : null;
    if (tracing) logger.info({ exporters: tracing.exporters }, 'tracing is on (OpenTelemetry)');
    outbound = createOutbound(options.outboundAllow);
    // Checks the keys before anything starts, so a bad key stops the server with the setting named.
    if (options.secretsKey) new SecretBox({ current: options.secretsKey, old: options.secretsOldKeys ?? [] });
    const needSecrets = sinksNamingSecrets(options.sinks ?? []);
    if (needSecrets.length > 0 && !options.secretsKey)
      throw new WeftError(
        'bad_config',
        `the url of sink "${needSecrets[0]}" names secrets, which this server cannot read without a key: set WEFT_SECRETS_KEY (the key the secrets were set under)`,
      );
  } catch (e) {
    await sql.end();
    throw e instanceof WeftError ? e : new WeftError('bad_config', (e as Error).message);
  }
  // Sinks read secrets through the engine's own service: the engine is made below, and nothing is
  // delivered before it starts.
  let secretsOf: Engine['secrets'] | undefined;
  const destinations = sinkDestinations(options.sinks ?? [], {
    outbound,
    secrets: (namespace, names) => secretsOf!.resolve(namespace, names),
  });
  let dispatcher: Dispatcher | undefined;
  let dispatch: DispatchInfo = { kind: 'table' };
  if (options.dispatcher === 'redis') {
    if (!options.redisUrl) {
      await sql.end();
      throw new WeftError(
        'bad_config',
        'the Redis dispatcher needs a Redis URL: set REDIS_URL or pass --redis-url',
      );
    }
    destinations.push(redisTaskDestination({ url: options.redisUrl, prefix: DEFAULT_TASK_STREAM_PREFIX }));
    dispatcher = outboxDispatcher('redis');
    dispatch = { kind: 'redis', streamPrefix: DEFAULT_TASK_STREAM_PREFIX };
  }
  const store = new PgStore(sql);
  const engine = new Engine({
    store,
    destinations,
    humanTaskSinks: humanTaskSinksOf(options.sinks ?? []),
    outbound,
    secretStore: new PgSecretStore(sql),
    taskLogStore: new PgTaskLogStore(sql),
    ...(options.secretsKey
      ? { secretKeys: { current: options.secretsKey, old: options.secretsOldKeys ?? [] } }
      : {}),
    ...(dispatcher ? { dispatcher } : {}),
    ...(options.webhookSecret ? { webhookSecret: options.webhookSecret } : {}),
    ...(options.engine ? { config: options.engine } : {}),
    ...(options.blobs ? { blobs: options.blobs } : {}),
    logger,
  });
  secretsOf = engine.secrets;
  stats = engine.context.stats;
  const app = buildApp({
    ...(https ? { https } : {}),
    engine,
    auth: {
      mode: authMode,
      keys: new PgApiKeys(sql),
      ...(options.auth?.metricsToken ? { metricsToken: options.auth.metricsToken } : {}),
    },
    logger,
    dispatch,
    databaseProbe: databaseProbe(sql),
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
    // Counted per key: without keys there is nothing to count by.
    ...(options.rateLimit && authMode === 'keys' ? { rateLimit: options.rateLimit } : {}),
    ...(options.console !== undefined ? { console: options.console } : {}),
  });
  let address: string;
  try {
    await engine.start();
    address = await app.listen({ host, port: options.port ?? 8080 });
  } catch (e) {
    // Such as a port in use: nothing may keep the process alive after the caller reports the error.
    await app.close().catch(() => {});
    await engine.stop().catch(() => {});
    await Promise.allSettled(destinations.map((d) => d.close?.()));
    await store.close().catch(() => {});
    await tracing?.shutdown().catch(() => {});
    throw e;
  }
  const unguard = options.guardProcess ? guardProcess(logger) : () => {};
  return {
    url: address,
    app,
    engine,
    store,
    async close() {
      logger.info(
        { polls_waiting: engine.context.wakeups.polls.size },
        'shutting down: new requests are refused (503 shutting_down), waiting polls answer now',
      );
      await app.close();
      logger.info('HTTP server closed: every request in flight has been answered');
      await engine.stop();
      logger.info('background loops stopped');
      await Promise.allSettled(destinations.map((d) => d.close?.()));
      await store.close();
      logger.info('database connections closed');
      // Last: the spans of the shutdown itself are exported too.
      await tracing
        ?.shutdown()
        .catch((e: unknown) => logger.warn({ error: String(e) }, 'exporting the last spans failed'));
      unguard();
    },
  };
}

/** True for an address only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
